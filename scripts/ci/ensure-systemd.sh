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

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-systemd: no systemd-analyze found and this is not an apt system; install systemd (systemd-analyze)" >&2
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
    echo "ensure-systemd: systemd-analyze is missing; run as root: apt-get install -y --no-install-recommends systemd" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
log=/tmp/ensure-systemd-apt.log
# The package lists may be missing or old on a fresh machine; one update, then the install.
if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends systemd </dev/null >"$log" 2>&1; then
  "${SUDO[@]}" apt-get update -q </dev/null >>"$log" 2>&1 || true
  if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends systemd </dev/null >>"$log" 2>&1; then
    echo "ensure-systemd: apt-get install systemd failed (log: $log)" >&2
    tail -n 20 "$log" >&2 || true
    exit 1
  fi
fi

if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "ensure-systemd: systemd installed but systemd-analyze not found on PATH" >&2
  exit 1
fi
command -v systemd-analyze
