#!/usr/bin/env bash
# Makes sure scripts/ci/syscall-filter-exec.py can run: Debian's python3-seccomp (libseccomp for /usr/bin/python3) and
# systemd-analyze (scripts/ci/ensure-systemd.sh), for test/integration/deploy/sandboxed-relay.test.ts, which runs the
# relay under the unit's system-call filter without systemd. Idempotent; safe under CI=true with no stdin.
#
#   scripts/ci/ensure-syscall-filter.sh     prints the python3 to use, installing python3-seccomp first when missing
#
# Installing needs Debian/Ubuntu apt and root (or passwordless sudo); without them it exits 1 saying what to install.
set -euo pipefail

bash "$(dirname "${BASH_SOURCE[0]}")/ensure-systemd.sh" >/dev/null

PY=/usr/bin/python3   # Debian's python, the one python3-seccomp installs for (not a pyenv shim)
if [ -x "$PY" ] && "$PY" -c 'import seccomp' 2>/dev/null; then echo "$PY"; exit 0; fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-syscall-filter: no $PY with the seccomp module and this is not an apt system; install python3-seccomp" >&2
  exit 1
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
    echo "ensure-syscall-filter: python3-seccomp is missing; run as root: apt-get install -y --no-install-recommends python3-seccomp" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
log=/tmp/ensure-syscall-filter-apt.log
if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends python3-seccomp </dev/null >"$log" 2>&1; then
  "${SUDO[@]}" apt-get update -q </dev/null >>"$log" 2>&1 || true
  if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends python3-seccomp </dev/null >>"$log" 2>&1; then
    echo "ensure-syscall-filter: apt-get install python3-seccomp failed (log: $log)" >&2
    tail -n 20 "$log" >&2 || true
    exit 1
  fi
fi
if ! "$PY" -c 'import seccomp' 2>/dev/null; then
  echo "ensure-syscall-filter: python3-seccomp installed but $PY cannot import seccomp" >&2
  exit 1
fi
echo "$PY"
