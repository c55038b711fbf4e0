#!/usr/bin/env bash
# Installs slotrelay as a systemd service from a built checkout (docs/deployment.md, "Bare-metal install"):
# the `slotrelay` system user, /etc/slotrelay (config + keys, root:slotrelay 0640), /var/lib/slotrelay (made by the
# unit's StateDirectory=), the sysctl drop-in (applied), and the unit (daemon-reload). It neither enables nor starts
# the service: run `slotrelay doctor` first. Idempotent: an existing config or keys file is never overwritten.
#
#   deploy/systemd/install.sh                 # as root, from the checkout to install (default /opt/slotrelay, built: make build)
#
# DESTDIR=/some/dir writes every file under that directory instead and prints the commands it would run as root
# (useradd, sysctl, systemctl) without running them: what test/integration/deploy/systemd-unit.test.ts checks.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
app="$(cd "$here/../.." && pwd)"          # the checkout the unit will run
dest="${DESTDIR:-}"
node_bin="${NODE:-$(command -v node || true)}"

run() {   # a command that changes the host: printed under DESTDIR, run otherwise
  if [ -n "$dest" ]; then echo "would run: $*"; else "$@"; fi
}

[ -n "$dest" ] || [ "$(id -u)" -eq 0 ] || { echo "install.sh: run as root, or with DESTDIR=... to stage the files" >&2; exit 1; }
[ -f "$app/dist/src/cli.js" ] || { echo "install.sh: $app/dist/src/cli.js is missing: build the checkout first (make build)" >&2; exit 1; }
[ -n "$node_bin" ] || { echo "install.sh: node is not on PATH (Node 22.13+, 24 or 26: docs/deployment.md)" >&2; exit 1; }
version="$("$node_bin" -p 'process.versions.node')"
case "$version" in
  22.*) [ "$(echo "$version" | cut -d. -f2)" -ge 13 ] || { echo "install.sh: $node_bin is Node $version; slotrelay needs 22.13+, 24 or 26" >&2; exit 1; } ;;
  24.*|26.*) ;;
  *) echo "install.sh: $node_bin is Node $version; slotrelay needs 22.13+, 24 or 26 (package.json engines)" >&2; exit 1 ;;
esac

# The user: a system account with no login and no home of its own (its state directory is made by systemd).
if [ -n "$dest" ] || ! id -u slotrelay >/dev/null 2>&1; then
  run useradd --system --user-group --no-create-home --home-dir /var/lib/slotrelay --shell /usr/sbin/nologin slotrelay
fi

# Configuration: read-only to the service (root owns it; the slotrelay group reads it).
etc="$dest/etc/slotrelay"
install -d -m 0750 "$etc"
[ -n "$dest" ] || chgrp slotrelay "$etc"
if [ ! -e "$etc/slotrelay.yaml" ]; then
  install -m 0640 "$here/slotrelay.yaml" "$etc/slotrelay.yaml"
  echo "wrote $etc/slotrelay.yaml: set upstream.rpcUrl and routes.rpc.endpoints to your RPC node"
fi
if [ ! -e "$etc/keys.yaml" ]; then
  key="$("$node_bin" "$app/dist/src/cli.js" keys new)"
  (umask 0137 && printf -- '- key: %s\n  name: first-client\n  rateLimit: { perSecond: 50, burst: 100 }\n' "$key" >"$etc/keys.yaml")
  echo "wrote $etc/keys.yaml with one API key (name first-client): $key"
fi
[ -n "$dest" ] || chgrp slotrelay "$etc/slotrelay.yaml" "$etc/keys.yaml"

# Kernel settings (UDP buffers for QUIC).
install -d "$dest/etc/sysctl.d"
install -m 0644 "$app/deploy/sysctl/60-slotrelay.conf" "$dest/etc/sysctl.d/60-slotrelay.conf"
run sysctl --system

# The unit, pointing at this checkout and this node.
install -d "$dest/etc/systemd/system"
sed -e "s#/opt/slotrelay#$app#g" -e "s#/usr/bin/node#$node_bin#g" "$here/slotrelay.service" >"$dest/etc/systemd/system/slotrelay.service"
chmod 0644 "$dest/etc/systemd/system/slotrelay.service"
run systemctl daemon-reload

echo "installed. Next: edit /etc/slotrelay/slotrelay.yaml, then"
echo "  runuser -u slotrelay -- $node_bin $app/dist/src/cli.js doctor --config /etc/slotrelay/slotrelay.yaml"
echo "  systemctl enable --now slotrelay && journalctl -u slotrelay -f -o cat"
