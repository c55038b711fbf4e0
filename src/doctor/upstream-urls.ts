// The upstream URLs the relay will use, as `start` derives them (cold, CLI only): upstream.rpcUrl (preflight, reads,
// rpc-route fallback), telemetry.rpcUrl ?? upstream.rpcUrl (slots, leader schedule, cluster nodes, stake), and their
// PubSub WebSockets (telemetry's slotSubscribe; the JSON-RPC host's PubSub relay to upstream.wsUrl).
import type { Config } from '../config/schema.js';
import { defaultWsUrl } from '../telemetry/telemetry-thread.js';

export interface UpstreamUrls {
  /** Distinct JSON-RPC URLs, each with what uses it. */
  readonly rpc: readonly { readonly url: string; readonly usedFor: string }[];
  /** Distinct WebSocket URLs, each with what uses it. */
  readonly ws: readonly { readonly url: string; readonly usedFor: string }[];
  /** Where the leader schedule and stakes come from (undefined: no upstream, the embedded localnet). */
  readonly cluster?: string;
}

function distinct(list: { url: string; usedFor: string }[]): { url: string; usedFor: string }[] {
  const out: { url: string; usedFor: string }[] = [];
  for (const e of list) {
    const same = out.find((o) => o.url === e.url);
    if (same === undefined) out.push({ ...e });
    else same.usedFor += `, ${e.usedFor}`;
  }
  return out;
}

export function upstreamUrls(config: Readonly<Config>): UpstreamUrls {
  const up = config.upstream.rpcUrl;
  const cluster = config.telemetry.rpcUrl ?? up;
  const rpc: { url: string; usedFor: string }[] = [];
  const ws: { url: string; usedFor: string }[] = [];
  if (up !== undefined) rpc.push({ url: up, usedFor: 'upstream (preflight, reads)' });
  if (config.telemetry.enabled && cluster !== undefined) {
    rpc.push({ url: cluster, usedFor: 'telemetry (slots, leader schedule, stake)' });
    ws.push({ url: config.telemetry.wsUrl ?? defaultWsUrl(cluster), usedFor: 'telemetry slotSubscribe' });
  }
  if (up !== undefined && config.rpcHost.enabled && config.jsonRpc.pubsub.enabled) {
    ws.push({ url: config.upstream.wsUrl ?? defaultWsUrl(up), usedFor: 'the PubSub relay' });
  }
  return { rpc: distinct(rpc), ws: distinct(ws), ...(cluster !== undefined ? { cluster } : {}) };
}
