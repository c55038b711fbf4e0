#!/usr/bin/env bash
# Makes sure a Chromium is on this machine, for the landing report's browser test (test/integration/bench/), which
# opens the HTML report headless and inspects a screenshot. Idempotent; safe under CI=true with no stdin.
#
#   scripts/ci/ensure-chromium.sh        prints the path of the chromium binary, installing it first when missing
#
# Installing needs Debian/Ubuntu apt (the `chromium` package) and root (or passwordless sudo). Without them it exits 1
# with a message saying what to install; it never prompts. CHROMIUM=/path/to/chrome skips all of it.
set -euo pipefail

find_chromium() {
  local c
  for c in "${CHROMIUM:-}" chromium chromium-browser google-chrome-stable google-chrome; do
    [ -n "$c" ] || continue
    if command -v "$c" >/dev/null 2>&1; then command -v "$c"; return 0; fi
  done
  return 1
}

if find_chromium; then exit 0; fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: no chromium found and this is not an apt system; install Chromium or set CHROMIUM=/path/to/chrome" >&2
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
    echo "ensure-chromium: chromium is missing; run as root: apt-get install -y --no-install-recommends chromium" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
log=/tmp/ensure-chromium-apt.log
# The package lists may be missing or old on a fresh machine; one update, then the install.
if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends chromium </dev/null >"$log" 2>&1; then
  "${SUDO[@]}" apt-get update -q </dev/null >>"$log" 2>&1 || true
  if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends chromium </dev/null >>"$log" 2>&1; then
    echo "ensure-chromium: apt-get install chromium failed (log: $log)" >&2
    tail -n 20 "$log" >&2 || true
    exit 1
  fi
fi

if ! find_chromium; then
  echo "ensure-chromium: chromium installed but not found on PATH" >&2
  exit 1
fi
