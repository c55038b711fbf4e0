#!/usr/bin/env bash
# Makes sure nginx and HAProxy are on this machine, for the reverse-proxy test (test/integration/relay/
# reverse-proxies.test.ts), which puts each in front of a real relay with its default proxy settings (nginx talks
# HTTP/1.0 to the upstream, HAProxy's `option httpchk` checks in HTTP/1.0). Idempotent; safe under CI=true, no stdin.
#
#   scripts/ci/ensure-proxies.sh      prints two lines: the nginx binary, then the haproxy binary, installing Debian's
#                                     `nginx` and `haproxy` packages first when either is missing
#
# Installing needs Debian/Ubuntu apt and root (or passwordless sudo). Without them it exits 1 with a message saying what
# to install; it never prompts. NGINX=/path/to/nginx and HAPROXY=/path/to/haproxy skip all of it. The packages' own
# services are never started here (the test runs its own unprivileged processes on 127.0.0.1 high ports with configs
# in a temp dir); policy-rc.d refuses them for the length of the install.
set -euo pipefail

find_bins() {
  local n h
  n="${NGINX:-$(command -v nginx 2>/dev/null || true)}"
  h="${HAPROXY:-$(command -v haproxy 2>/dev/null || true)}"
  # Debian puts both in /usr/sbin, which a non-root PATH may lack.
  [ -n "$n" ] || { [ -x /usr/sbin/nginx ] && n=/usr/sbin/nginx; } || true
  [ -n "$h" ] || { [ -x /usr/sbin/haproxy ] && h=/usr/sbin/haproxy; } || true
  if [ -n "$n" ] && [ -x "$n" ] && [ -n "$h" ] && [ -x "$h" ]; then printf '%s\n%s\n' "$n" "$h"; return 0; fi
  return 1
}

if find_bins; then exit 0; fi

# shellcheck source=scripts/ci/apt-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"
apt_install ensure-proxies --no-services nginx haproxy || exit 1

if ! find_bins; then
  echo "ensure-proxies: nginx and haproxy installed but not found (PATH, /usr/sbin)" >&2
  exit 1
fi
