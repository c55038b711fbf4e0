#!/usr/bin/env bash
# Builds the quinn-tpu-sink interop peer (../shared/peers/quinn-tpu-sink) into out/quinn (git-ignored) unless it is
# already there. Prints the binary path last. Usage: scripts/build-quinn-sink.sh [OUT_DIR]
# Test files running in parallel forks may call this at the same moment: one build at a time (flock), the others
# wait and then find the binary (two concurrent apt-get runs fail on dpkg's lock).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/out/quinn}
src=${QUINN_SINK_SRC:-$root/../shared/peers/quinn-tpu-sink}
mkdir -p "$out"
exec 9>"$out/.build.lock"
flock 9
if [ -x "$out/quinn-tpu-sink" ] && [ -f "$out/server.key.der" ]; then echo "$out/quinn-tpu-sink"; exit 0; fi
"$src/build.sh" "$out" | tail -n 1
