#!/usr/bin/env bash
# Makes sure `systemd-analyze` is on this machine, for the unit file's test (test/integration/deploy/), which runs
# `systemd-analyze verify` and `systemd-analyze security --offline=true` on deploy/systemd/slotrelay.service. Both
# read the unit file only: they work in a container where systemd is not PID 1. Idempotent; safe under CI=true with
# no stdin.
#
#   scripts/ci/ensure-systemd.sh        prints the path of systemd-analyze, installing Debian's `systemd` first when missing
#
# Installing needs Debian/Ubuntu apt and root (or passwordless sudo). Without them it exits 1 with a message saying
# what to install; it never prompts. Installing the package in a container does not start systemd.
set -euo pipefail

if command -v systemd-analyze >/dev/null 2>&1; then command -v systemd-analyze; exit 0; fi

# shellcheck source=scripts/ci/apt-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"
apt_install ensure-systemd systemd || exit 1

if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "ensure-systemd: systemd installed but systemd-analyze not found on PATH" >&2
  exit 1
fi
command -v systemd-analyze
