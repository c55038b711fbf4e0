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

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-prometheus: no prometheus/promtool found and this is not an apt system; install Prometheus or set PROMETHEUS= and PROMTOOL=" >&2
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
    echo "ensure-prometheus: prometheus is missing; run as root: apt-get install -y --no-install-recommends prometheus" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
log=/tmp/ensure-prometheus-apt.log
# Keep the package from starting its own daemon (port 9090) during the install; restore whatever policy was there.
policy=/usr/sbin/policy-rc.d
saved=""
if [ -e "$policy" ]; then saved="$(mktemp)"; "${SUDO[@]}" cp -p "$policy" "$saved"; fi
restore_policy() {
  if [ -n "$saved" ]; then "${SUDO[@]}" cp -p "$saved" "$policy"; rm -f "$saved"; else "${SUDO[@]}" rm -f "$policy"; fi
}
trap restore_policy EXIT
printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null
"${SUDO[@]}" chmod 755 "$policy"

# The package lists may be missing or old on a fresh machine; one update, then the install.
if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends prometheus </dev/null >"$log" 2>&1; then
  "${SUDO[@]}" apt-get update -q </dev/null >>"$log" 2>&1 || true
  if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends prometheus </dev/null >>"$log" 2>&1; then
    echo "ensure-prometheus: apt-get install prometheus failed (log: $log)" >&2
    tail -n 20 "$log" >&2 || true
    exit 1
  fi
fi

if ! find_bins; then
  echo "ensure-prometheus: prometheus installed but prometheus/promtool not found on PATH" >&2
  exit 1
fi
