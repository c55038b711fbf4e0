// Reachability probe for one JSON-RPC endpoint (main/front thread, cold: one request per health tick, never awaited
// by a request handler). Any HTTP answer within the timeout means reachable — a sendTransaction-only endpoint may
// refuse getHealth, and that still proves it is up. The URL may carry a provider's key, so it is never logged or
// reported: endpoints are named by their index.
export interface ProbeResult {
  readonly reachable: boolean;
  /** Unix ms of the last answer (0: never). */
  readonly lastAnswerAtMs: number;
  /** Short cause of the last failure ('timeout', 'ECONNREFUSED', ...), or null. */
  readonly lastError: string | null;
}

const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' });

export class EndpointProbe {
  private inFlight = false;
  private result: ProbeResult = { reachable: true, lastAnswerAtMs: 0, lastError: null };
  private everProbed = false;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  /** The latest result. Reachable until a first probe says otherwise (start-up is not an outage). */
  current(): ProbeResult {
    return this.result;
  }

  probed(): boolean {
    return this.everProbed;
  }

  /** Start one probe unless one is still running; `done` runs when it settles. */
  probe(done: () => void): void {
    if (this.inFlight) return;
    this.inFlight = true;
    fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: BODY,
      signal: AbortSignal.timeout(this.timeoutMs),
    }).then(
      async (res) => {
        await res.body?.cancel().catch(() => undefined);
        this.settle({ reachable: true, lastAnswerAtMs: Date.now(), lastError: null }, done);
      },
      (err: unknown) => this.settle({ reachable: false, lastAnswerAtMs: this.result.lastAnswerAtMs, lastError: causeOf(err) }, done),
    );
  }

  private settle(r: ProbeResult, done: () => void): void {
    this.inFlight = false;
    this.everProbed = true;
    this.result = r;
    done();
  }
}

/** A short, key-free cause: the error code or name, never the message (undici's may quote the URL). */
function causeOf(err: unknown): string {
  const e = err as { name?: string; code?: string; cause?: { code?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  return e.cause?.code ?? e.code ?? e.name ?? 'error';
}
