// Doctor check `upstream-rpc` (cold): each upstream JSON-RPC URL answers getHealth "ok" and its processed slot
// advances within FRESH_WAIT_MS (a node that answers but is stuck is as bad as none for landing). One finding per
// distinct URL. The answer's Date header is kept for the clock check's fallback.
import { urlForLog } from '../log/url-for-log.js';
import { fail, pass, type Finding } from './finding.js';
import { rpcCall, RpcCallError } from './rpc.js';

/** How long the slot may take to move: 5 mainnet slots (400 ms), so a healthy node always shows progress. */
export const FRESH_WAIT_MS = 2_000;
const POLL_MS = 100;

export interface DateSample {
  /** The upstream's HTTP Date header, parsed (ms, 1 s resolution). */
  readonly serverMs: number;
  /** Local time halfway through the round trip. */
  readonly localMs: number;
}

export interface UpstreamRpcResult {
  readonly finding: Finding;
  readonly dateSample?: DateSample;
}

export async function checkUpstreamRpc(url: string, usedFor: string, timeoutMs: number): Promise<UpstreamRpcResult> {
  const id = 'upstream-rpc';
  const shown = urlForLog(url);
  const fixDown = `make ${shown} reachable from this host (firewall, URL, API key in upstream.rpcUrl), or point upstream.rpcUrl / telemetry.rpcUrl at a node that is`;
  try {
    const health = await rpcCall<string>(url, 'getHealth', [], timeoutMs);
    if (health.result !== 'ok') return { finding: fail(id, `${shown} (${usedFor}): getHealth answered ${JSON.stringify(health.result)}`, fixDown, { url: shown }) };
    const before = Date.now();
    const first = await rpcCall<number>(url, 'getSlot', [{ commitment: 'processed' }], timeoutMs);
    const sample = first.date === undefined ? undefined : { serverMs: Date.parse(first.date), localMs: before + first.ms / 2 };
    const t0 = performance.now();
    let last = first.result;
    while (last <= first.result && performance.now() - t0 < FRESH_WAIT_MS) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      last = (await rpcCall<number>(url, 'getSlot', [{ commitment: 'processed' }], timeoutMs)).result;
    }
    const waited = Math.round(performance.now() - t0);
    const data = { url: shown, slot: last, advancedBy: last - first.result, waitedMs: waited, roundTripMs: Math.round(first.ms) };
    const dateSample = sample !== undefined && Number.isFinite(sample.serverMs) ? { dateSample: sample } : {};
    if (last <= first.result) {
      return {
        finding: fail(id, `${shown} (${usedFor}): getHealth ok but the processed slot stayed at ${last} for ${waited} ms: the node is not following the cluster`, 'check the node catches up (solana catchup / its logs), or use another RPC node', data),
        ...dateSample,
      };
    }
    return { finding: pass(id, `${shown} (${usedFor}): getHealth ok, processed slot ${last} (+${last - first.result} in ${waited} ms), round trip ${Math.round(first.ms)} ms`, data), ...dateSample };
  } catch (err) {
    if (!(err instanceof RpcCallError)) throw err;
    return { finding: fail(id, `${usedFor}: ${err.message}`, fixDown, { url: shown }) };
  }
}
