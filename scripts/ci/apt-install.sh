# Sourced by the scripts/ci/ensure-*.sh scripts: installs Debian packages the tests need, the one way they all do it.
#
#   apt_install WHO [--no-services] PACKAGE...
#
# WHO names the caller in messages (e.g. ensure-proxies). Needs Debian/Ubuntu apt and root (or passwordless sudo);
# without them it returns 1 with a message saying what to install, and never prompts (CI=true, no stdin). The package
# lists may be missing or old on a fresh machine: one install, on failure one `apt-get update`, then the install again.
# --no-services keeps the packages' own daemons from starting during the install (policy-rc.d refuses them; whatever
# policy was there is restored): the tests run their own processes on 127.0.0.1 in temp dirs.
apt_install() {
  local who="$1"; shift
  local no_services=0
  if [ "${1:-}" = "--no-services" ]; then no_services=1; shift; fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$who: $* not found and this is not an apt system; install: $*" >&2
    return 1
  fi
  local -a sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo=(sudo -n); else
      echo "$who: $* missing; run as root: apt-get install -y --no-install-recommends $*" >&2
      return 1
    fi
  fi
  local log="/tmp/$who-apt.log" policy=/usr/sbin/policy-rc.d saved="" rc=0
  if [ "$no_services" -eq 1 ]; then
    if [ -e "$policy" ]; then saved="$(mktemp)"; "${sudo[@]}" cp -p "$policy" "$saved"; fi
    printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 755 "$policy"
  fi
  if ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "$@" </dev/null >"$log" 2>&1; then
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -q </dev/null >>"$log" 2>&1 || true
    if ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "$@" </dev/null >>"$log" 2>&1; then
      echo "$who: apt-get install $* failed (log: $log)" >&2
      tail -n 20 "$log" >&2 || true
      rc=1
    fi
  fi
  if [ "$no_services" -eq 1 ]; then
    if [ -n "$saved" ]; then "${sudo[@]}" cp -p "$saved" "$policy"; rm -f "$saved"; else "${sudo[@]}" rm -f "$policy"; fi
  fi
  return "$rc"
}
