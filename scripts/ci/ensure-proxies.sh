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

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-proxies: nginx/haproxy not found and this is not an apt system; install them or set NGINX= and HAPROXY=" >&2
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
    echo "ensure-proxies: nginx/haproxy missing; run as root: apt-get install -y --no-install-recommends nginx haproxy" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
log=/tmp/ensure-proxies-apt.log
# Keep the packages from starting their own daemons (nginx on port 80, haproxy) during the install; restore whatever
# policy was there.
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
if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends nginx haproxy </dev/null >"$log" 2>&1; then
  "${SUDO[@]}" apt-get update -q </dev/null >>"$log" 2>&1 || true
  if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends nginx haproxy </dev/null >>"$log" 2>&1; then
    echo "ensure-proxies: apt-get install nginx haproxy failed (log: $log)" >&2
    tail -n 20 "$log" >&2 || true
    exit 1
  fi
fi

if ! find_bins; then
  echo "ensure-proxies: nginx and haproxy installed but not found (PATH, /usr/sbin)" >&2
  exit 1
fi
