#!/usr/bin/env bash
# Runs a throw-away Redis 7 for a local cluster (tests, trying cluster.url on one machine) in the FOREGROUND:
# bound to 127.0.0.1 only, no persistence (nothing written to disk), no config file. Installs redis-server first when
# the machine lacks it (ensure-redis.sh). Stop it with SIGTERM / Ctrl-C. Never prompts; safe under CI=true.
#
#   scripts/cluster/start-redis.sh PORT          e.g. 6390; then cluster.url: redis://127.0.0.1:6390
#
# The tests start it through test/integration/cluster/redis-server.ts, which picks a free port.
set -euo pipefail
port="${1:?usage: start-redis.sh PORT}"
case "$port" in (*[!0-9]*|'') echo "start-redis: PORT must be a number" >&2; exit 2;; esac

here="$(cd "$(dirname "$0")" && pwd)"
bin="$("$here/ensure-redis.sh")"
# exec: the caller's child IS redis-server (its pid, its signals).
exec "$bin" --bind 127.0.0.1 --port "$port" --protected-mode yes --save '' --appendonly no \
  --dir /tmp --logfile '' --loglevel warning --daemonize no </dev/null
