// What `slotrelay start` prints for a human (cold): every listener, where the key is, and a copy-paste request.
import type { Config } from './config/schema.js';
import type { ListenInfo } from './front/front-server.js';
import type { LocalnetChild } from './localnet-child.js';
import { urlHasSecrets } from './log/url-for-log.js';

export interface BannerInput {
  readonly listeners: readonly ListenInfo[];
  readonly config: Readonly<Config>;
  readonly configFile: string;
  readonly newKey?: string;
  readonly localnet: LocalnetChild | null;
  /** The uWS build serving HTTP (src/native/uws.ts describeBuild). */
  readonly httpRuntime?: string;
}

export function printStartBanner(b: BannerInput): void {
  const out: string[] = ['', 'slotrelay is listening on:'];
  for (const l of b.listeners) {
    if (l.name === 'pubsub') {
      out.push(`  PubSub WebSocket  (signatureSubscribe, slotSubscribe, accountSubscribe; ?key=)  ws://${l.host}:${l.port}`);
      continue;
    }
    if (l.name === 'quic') {
      out.push(`  QUIC ingress      (ALPN slotrelay/1 and solana-tpu; client certificate CN = key, docs/quic-ingress.md)  udp ${l.host}:${l.port}`);
      continue;
    }
    if (l.name === 'admin') {
      out.push(`  status page       (admin listener: live health, routes, leaders, keys; docs/status-page.md)  http://${l.host}:${l.port}/`);
      // A fixed admin port (8890 by default) is one relay's per host: a second relay here refuses to start on it.
      if (b.config.admin.port !== 0) out.push(`                    admin.port ${l.port} is this relay's alone: another relay on this host needs its own admin.port (docs/deployment.md)`);
      continue;
    }
    const what = l.name === 'rpc' ? 'JSON-RPC host  (POST /, GET /health, GET /metrics)' : 'relay host     (POST /v1/submit, /v1/transactions, /v1/sendTransaction, /v1/bundles)';
    out.push(`  ${what}  http://${l.host}:${l.port}`);
  }
  if (b.localnet) {
    out.push(`  embedded localnet RPC  ${b.localnet.rpcUrl}`);
    for (const v of b.localnet.validators) out.push(`  localnet validator ${v.identity}  TPU QUIC ${v.tpuQuic}`);
    if (b.localnet.blockEngineUrl !== '') out.push(`  localnet block engine (Jito API: /api/v1/bundles, /api/v1/transactions)  ${b.localnet.blockEngineUrl}`);
  }
  // Bundles go to the bundle service for keys with bundles: true (docs/bundles.md); its URL may carry a secret.
  const bundleUrl = b.config.bundles.url;
  if (bundleUrl !== undefined) out.push(`bundles: forwarded to ${urlHasSecrets(bundleUrl) ? 'the configured bundle service' : new URL(bundleUrl).origin} for keys with bundles: true`);
  if (b.config.rings.quicThreads > 1) out.push(`QUIC threads: ${b.config.rings.quicThreads} (each leader's connection in one of them: docs/quic-sharding.md)`);
  if (b.httpRuntime !== undefined) out.push(`HTTP runtime: ${b.httpRuntime} on Node ${process.versions.node}`);
  out.push(`config: ${b.configFile}`);
  if (b.newKey) {
    out.push('', 'A fresh API key was created for you (stored in local/keys.yaml; shown this once):', `  export SLOTRELAY_KEY=${b.newKey}`);
  } else {
    out.push('', 'Your API key is in local/keys.yaml (or your keys file):', "  export SLOTRELAY_KEY=$(awk '/key:/{print $3; exit}' local/keys.yaml)");
  }
  const relay = b.listeners.find((l) => l.name === 'relay');
  const rpc = b.listeners.find((l) => l.name === 'rpc');
  // A provider URL may carry its key in the query string: then the example names it instead of printing it.
  const configured = b.config.upstream.rpcUrl;
  const upstream = b.localnet?.rpcUrl ?? (configured !== undefined && urlHasSecrets(configured) ? '"$UPSTREAM_RPC_URL"' : configured);
  if (relay && b.localnet) {
    out.push(
      '',
      'Send one transaction and see where it landed (slot, leader, slots and ms to land, the route that sent first):',
      `  node dist/src/cli.js example --cluster ${b.localnet.rpcUrl} --relay http://${relay.host}:${relay.port}${rpc ? ` --rpc http://${rpc.host}:${rpc.port}` : ''}`,
    );
  }
  if (relay && upstream) {
    out.push(
      '',
      'Or by hand (a signed transfer on the localnet, made by the example-tx helper):',
      `  curl -s http://${relay.host}:${relay.port}/v1/submit -H "x-api-key: $SLOTRELAY_KEY" -H 'content-type: application/json' \\`,
      `    -d "{\\"transaction\\":\\"$(node dist/src/cli.js example-tx --rpc ${upstream})\\"}"`,
    );
  }
  if (rpc) {
    out.push('', 'Or through JSON-RPC, as @solana/web3.js would:', `  new Connection('http://${rpc.host}:${rpc.port}', { httpHeaders: { 'x-api-key': KEY } })`);
  }
  process.stdout.write(out.join('\n') + '\n\n');
}
