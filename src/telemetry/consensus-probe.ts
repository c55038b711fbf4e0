// Which consensus the cluster runs (main thread, cold: one getAgGenesisCert call at start and after each reconnect;
// the health monitor drives it, src/health/health-monitor.ts). Agave 4.3+ answers the Alpenglow genesis certificate
// (an object: the cluster runs Alpenglow since `block.slot`) or null (still Tower BFT); an older node answers -32601
// "Method not found", which the relay reads as Tower (a pre-4.3 node cannot be on an Alpenglow cluster's current
// version; Helius' docs would call it unknown: `source` says which answer it was). No answer (down, timeout, HTTP
// error) leaves the last verdict in place and asks again at the next tick. The URL may carry a provider's key: it is
// never logged or reported; errors are a short cause.
export const CLUSTER_CONSENSUS = ['alpenglow', 'tower', 'unknown'] as const;
export type ClusterConsensus = (typeof CLUSTER_CONSENSUS)[number];

export interface ConsensusReport {
  readonly mode: ClusterConsensus;
  /** What decided it: the certificate or null from getAgGenesisCert, or -32601 from a pre-4.3 node; null = not yet. */
  readonly source: 'certificate' | 'null' | 'method_not_found' | null;
  /** Alpenglow: the first Alpenglow slot (the certificate's block.slot); else null. */
  readonly sinceSlot: number | null;
  /** Unix ms of the answer that decided it (null: none yet). */
  readonly checkedAtMs: number | null;
  /** Why the last ask got no verdict ('timeout', 'ECONNREFUSED', 'HTTP 502', 'bad answer'), or null. */
  readonly error: string | null;
}

/** JSON-RPC "Method not found" (Agave before 4.3). */
const METHOD_NOT_FOUND = -32601;

export type Verdict = Pick<ConsensusReport, 'mode' | 'source' | 'sinceSlot'>;

/** The verdict of one getAgGenesisCert answer body; throws on a body that is neither. */
export function verdictOf(body: { result?: unknown; error?: { code?: unknown } }): Verdict {
  if (body.error !== undefined) {
    if (body.error.code === METHOD_NOT_FOUND) return { mode: 'tower', source: 'method_not_found', sinceSlot: null };
    throw new Error(`error ${String(body.error.code)}`);
  }
  if (body.result === null) return { mode: 'tower', source: 'null', sinceSlot: null };
  const slot = (body.result as { block?: { slot?: unknown } } | undefined)?.block?.slot;
  if (typeof slot !== 'number') throw new Error('bad answer');
  return { mode: 'alpenglow', source: 'certificate', sinceSlot: slot };
}

export class ConsensusProbe {
  private report: ConsensusReport = { mode: 'unknown', source: null, sinceSlot: null, checkedAtMs: null, error: null };
  private inFlight = false;
  /** Ask at the next tick: at start, and after the upstream was lost (a reconnect may be a different cluster). */
  private due = true;
  asks = 0;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  current(): ConsensusReport {
    return this.report;
  }

  /** The upstream went away (unreachable, or the embedded localnet restarted): ask again once it is back. */
  lost(): void {
    this.due = true;
  }

  /** One health tick with the upstream reachable: ask if due; `done` runs when a verdict changed. */
  tick(done: () => void): void {
    if (!this.due || this.inFlight) return;
    this.inFlight = true;
    this.asks++;
    fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"getAgGenesisCert"}',
      signal: AbortSignal.timeout(this.timeoutMs),
    })
      .then(async (res) => {
        if (res.status !== 200) {
          await res.body?.cancel().catch(() => undefined);
          throw Object.assign(new Error(`HTTP ${res.status}`), { code: `HTTP ${res.status}` });
        }
        return verdictOf((await res.json()) as { result?: unknown; error?: { code?: unknown } });
      })
      .then(
        (v) => {
          this.inFlight = false;
          this.due = false;
          const changed = v.mode !== this.report.mode || v.sinceSlot !== this.report.sinceSlot;
          this.report = { ...v, checkedAtMs: Date.now(), error: null };
          if (changed) done();
        },
        (err: unknown) => {
          this.inFlight = false;
          this.report = { ...this.report, error: causeOf(err) };
        },
      );
  }
}

/** A short, key-free cause (undici's messages may quote the URL). */
function causeOf(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  if (e.message === 'bad answer' || e.message?.startsWith('error ') === true) return e.message;
  return e.cause?.code ?? e.code ?? 'error';
}
