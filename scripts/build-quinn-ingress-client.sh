#!/usr/bin/env bash
# Builds the quinn-ingress-client interop peer (test/peers/quinn-ingress-client) offline from Debian's packaged Rust
# crates into out/quinn-ingress-client (git-ignored), unless the binary there is newer than its sources. Prints the
# binary path last. Usage: scripts/build-quinn-ingress-client.sh [OUT_DIR]
# One build at a time (flock): test files in parallel forks may ask at once, and two apt-get runs fail on dpkg's lock.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/out/quinn-ingress-client}
src=$root/test/peers/quinn-ingress-client
bin=$out/quinn-ingress-client
mkdir -p "$out"
exec 9>"$out/.build.lock"
flock 9
if [ -x "$bin" ] && [ -z "$(find "$src/src" "$src/Cargo.toml" "$src/.cargo" -newer "$bin" -print -quit)" ]; then
  echo "$bin"
  exit 0
fi
# The same Debian crate packages as ../shared/peers/quinn-tpu-sink/build.sh.
if [ ! -d /usr/share/cargo/registry/quinn-0.9.3 ]; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    librust-quinn-dev librust-tokio-dev librust-libc-dev librust-log-dev >/dev/null
fi
command -v cargo >/dev/null || { echo "cargo is needed (rustup's cargo or Debian's cargo package)" >&2; exit 1; }
# Build from a copy at a fixed path: no Cargo.lock is written into the repository, and cargo's fingerprints (which
# include the package's path) stay valid from one build to the next, so only this crate is recompiled.
build=$out/build
rm -rf "$build/src"
mkdir -p "$build"
cp -r "$src/src" "$src/Cargo.toml" "$src/.cargo" "$build/"
# The quinn-tpu-sink's target directory (scripts/build-quinn-sink.sh; the same crates and features): the
# dependencies compile once for both peers. cargo locks the directory itself while building.
target=${QUINN_TARGET_DIR:-$root/out/quinn/target}
(cd "$build" && CARGO_TARGET_DIR="$target" cargo build --release --offline -q)
cp "$target/release/quinn-ingress-client" "$bin.tmp"
mv "$bin.tmp" "$bin"
echo "$bin"
