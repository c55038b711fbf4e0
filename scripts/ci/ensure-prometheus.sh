#!/usr/bin/env bash
# Makes sure Prometheus and promtool are on this machine, for the deploy/ rules and dashboard test
# (test/integration/deploy/), which checks and unit-tests the rules with promtool and scrapes a real relay with a real
# Prometheus. Idempotent; safe under CI=true with no stdin.
#
#   scripts/ci/ensure-prometheus.sh      prints two lines: the prometheus binary, then the promtool binary,
#                                        installing Debian's `prometheus` package first when either is missing
#
# Installing needs Debian/Ubuntu apt and root (or passwordless sudo). Without them it exits 1 with a message saying what
# to install; it never prompts. PROMETHEUS=/path/to/prometheus and PROMTOOL=/path/to/promtool skip all of it.
# The package's own service is never started here (the test runs its own process on 127.0.0.1 in a temp dir); where
# the package's postinst would start one, policy-rc.d refuses it for the length of the install.
set -euo pipefail

find_bins() {
  local p t
  p="${PROMETHEUS:-$(command -v prometheus 2>/dev/null || true)}"
  t="${PROMTOOL:-$(command -v promtool 2>/dev/null || true)}"
  if [ -n "$p" ] && [ -x "$p" ] && [ -n "$t" ] && [ -x "$t" ]; then printf '%s\n%s\n' "$p" "$t"; return 0; fi
  return 1
}

if find_bins; then exit 0; fi

# shellcheck source=scripts/ci/apt-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"
apt_install ensure-prometheus --no-services prometheus || exit 1

if ! find_bins; then
  echo "ensure-prometheus: prometheus installed but prometheus/promtool not found on PATH" >&2
  exit 1
fi
