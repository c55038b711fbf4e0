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

# shellcheck source=scripts/ci/apt-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"
apt_install ensure-chromium chromium || exit 1

if ! find_chromium; then
  echo "ensure-chromium: chromium installed but not found on PATH" >&2
  exit 1
fi
