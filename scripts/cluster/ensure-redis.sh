#!/usr/bin/env bash
# Makes sure a redis-server binary (Redis >= 7) is on this machine, for the cluster tests (test/integration/cluster/)
# and for operators trying `cluster.url` locally. Idempotent; safe under CI=true with no stdin; never starts a
# system-wide service (the tests start their own server on a free 127.0.0.1 port: scripts/cluster/start-redis.sh).
#
#   scripts/cluster/ensure-redis.sh        prints the path of redis-server, installing it first when missing
#
# Installing needs Debian/Ubuntu apt and root (or passwordless sudo). Without them it exits 1 with a message
# saying what to install; it never prompts.
set -euo pipefail

want_major=7

have_redis() {
  local bin
  bin="$(command -v redis-server 2>/dev/null || true)"
  [ -n "$bin" ] || return 1
  # "Redis server v=7.0.15 sha=..." -> 7
  local major
  major="$("$bin" --version 2>/dev/null | sed -n 's/.* v=\([0-9][0-9]*\)\..*/\1/p')"
  [ -n "$major" ] && [ "$major" -ge "$want_major" ] || return 1
  echo "$bin"
}

if have_redis; then exit 0; fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-redis: redis-server >= ${want_major} is not installed and this is not an apt system; install Redis ${want_major} (https://redis.io/docs/latest/operate/oss_and_stack/install/)" >&2
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
    echo "ensure-redis: redis-server is missing; run as root: apt-get install -y --no-install-recommends redis-server" >&2
    exit 1
  fi
fi

# The package's postinst would start a system redis on port 6379: a policy-rc.d that forbids service starts
# (exit 101) keeps the machine as it was. One already present (Docker images ship one) is left as it is.
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null
  "${SUDO[@]}" chmod 755 "$policy"
  made_policy=1
fi
cleanup() { if [ "$made_policy" = 1 ]; then "${SUDO[@]}" rm -f "$policy"; fi; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
# The package lists may be missing or old on a fresh machine; one update, then the install.
if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends redis-server </dev/null >/tmp/ensure-redis-apt.log 2>&1; then
  "${SUDO[@]}" apt-get update -q </dev/null >>/tmp/ensure-redis-apt.log 2>&1 || true
  if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends redis-server </dev/null >>/tmp/ensure-redis-apt.log 2>&1; then
    echo "ensure-redis: apt-get install redis-server failed (log: /tmp/ensure-redis-apt.log)" >&2
    tail -n 20 /tmp/ensure-redis-apt.log >&2 || true
    exit 1
  fi
fi

if ! have_redis; then
  echo "ensure-redis: redis-server installed but not >= ${want_major}: $(redis-server --version 2>&1 || true)" >&2
  exit 1
fi
