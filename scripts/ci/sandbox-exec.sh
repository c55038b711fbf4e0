#!/usr/bin/env bash
# Runs a command in a stand-in for the filesystem and user sandbox of deploy/systemd/slotrelay.service, without
# systemd (for test/integration/deploy/sandboxed-relay.test.ts), in a private mount namespace:
#   ProtectSystem=strict  -> every mount read-only, except the API filesystems (/proc, /sys, /dev)
#   StateDirectory=       -> STATE_DIR stays writable (the only place the relay may write)
#   PrivateTmp=yes        -> /tmp stays writable (a private tmpfs there would hide the caller's files)
#   User=, NoNewPrivileges -> the command runs as UID:GID with no supplementary groups and no new privileges
# Needs root (or CAP_SYS_ADMIN) for unshare -m; util-linux's unshare and setpriv.
#
#   sandbox-exec.sh UID GID STATE_DIR COMMAND [ARGS...]
#   sandbox-exec.sh --probe      exits 0 when this host can build the sandbox (prints why not otherwise)
set -euo pipefail

if [ "${1:-}" = "--probe" ]; then
  unshare -m --propagation private -- sh -c 'mount --bind / / && mount -o remount,bind,ro / && setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs true' 2>&1
  exit $?
fi
[ $# -ge 4 ] || { echo "usage: sandbox-exec.sh UID GID STATE_DIR COMMAND [ARGS...]" >&2; exit 2; }
uid="$1" gid="$2" state="$(realpath "$3")"
shift 3
exec unshare -m --propagation private -- bash -c '
  set -euo pipefail
  uid="$1" gid="$2" state="$3"; shift 3
  mount --bind "$state" "$state"
  mount --bind /tmp /tmp
  # Every other mount read-only (mountinfo field 5 is the mount point; \040 escapes a space).
  while read -r _ _ _ _ point _; do
    point="$(printf "%b" "$point")"
    case "$point" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*|/tmp|"$state") continue ;; esac
    mount -o remount,bind,ro "$point" 2>/dev/null || true
  done </proc/self/mountinfo
  exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --no-new-privs -- "$@"
' sandbox "$uid" "$gid" "$state" "$@"
