// Doctor check `consensus` (cold, CLI only): which consensus the cluster runs, from the cluster RPC's
// getAgGenesisCert (Agave 4.3+): alpenglow (a certificate: finalized ~150 ms after a block, confirmed = finalized),
// tower (null), or a node older than 4.3 (-32601, read as tower, and a warning: mainnet runs Alpenglow since
// 2026-10-21, so such a node is not following mainnet's current version). What the relay does with it: docs/receipts.md.
import { urlForLog } from '../log/url-for-log.js';
import { verdictOf } from '../telemetry/consensus-probe.js';
import { fail, pass, skip, warn, type Finding } from './finding.js';

export async function checkConsensus(clusterUrl: string | undefined, timeoutMs: number): Promise<Finding> {
  const id = 'consensus';
  if (clusterUrl === undefined) return skip(id, 'no upstream.rpcUrl: `start` runs the embedded localnet (Alpenglow unless localnet.consensus is tower)');
  const shown = urlForLog(clusterUrl);
  let body: { result?: unknown; error?: { code?: unknown; message?: unknown } };
  try {
    const res = await fetch(clusterUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"getAgGenesisCert"}',
      signal: AbortSignal.timeout(timeoutMs),
    });
    body = (await res.json()) as typeof body;
  } catch (err) {
    const e = err as { name?: string; cause?: { code?: string } };
    const why = e.name === 'TimeoutError' ? 'no answer (timed out)' : (e.cause?.code ?? 'not a JSON-RPC answer');
    return fail(id, `${shown}: getAgGenesisCert: ${why}`, 'make the cluster RPC reachable (see the upstream-rpc finding)', { url: shown });
  }
  try {
    const v = verdictOf(body);
    const data = { url: shown, consensus: v.mode, source: v.source, sinceSlot: v.sinceSlot };
    if (v.source === 'certificate') return pass(id, `${shown}: Alpenglow since slot ${v.sinceSlot} (finalized ~150 ms after a block; confirmed = finalized)`, data);
    if (v.source === 'null') return pass(id, `${shown}: Tower BFT (getAgGenesisCert null: the cluster has not migrated to Alpenglow)`, data);
    return warn(id, `${shown}: the node answers getAgGenesisCert "Method not found" (Agave older than 4.3): the relay assumes Tower BFT`, 'use an RPC node on Agave 4.3 or later (mainnet runs Alpenglow since 2026-10-21)', data);
  } catch (err) {
    return fail(id, `${shown}: getAgGenesisCert answered ${(err as Error).message}`, 'check the node answers JSON-RPC (see the upstream-rpc finding)', { url: shown });
  }
}
