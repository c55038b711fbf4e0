// What the soak driver watches besides its own submissions (driver process, cold: about one request per second):
// the relay's GET /health?detail (each status change, and seconds spent in each status), the localnet's current
// blockhash for the signer (getLatestBlockhash every few seconds; the last one is kept while the localnet is down),
// and the relay's outcome counters per window of a few seconds (GET /metrics).
import type http from 'node:http';
import { outcomesFromMetrics, scrapeMetrics, sumMetric, type OutcomeTable } from './accounting.js';
import { isTransportFailure, request } from './http.js';
import type { TransferSigner } from './transactions.js';
import { NonOverlappingInterval } from './non-overlapping-interval.js';

const HEALTH_TIMEOUT_MS = 2_000;
const BLOCKHASH_TIMEOUT_MS = 2_000;
/** Health transitions kept (one per change; a flapping relay beyond this is summarised by the counts). */
const MAX_TRANSITIONS = 500;

export interface HealthTransition {
  readonly t: number;
  readonly status: string;
  readonly reasons: readonly string[];
}

export class HealthWatch {
  readonly transitions: HealthTransition[] = [];
  /** Polls per status (about one per second each). */
  readonly polls: Record<string, number> = {};
  private last = '';
  private readonly poller = new NonOverlappingInterval();

  constructor(
    private readonly agent: http.Agent,
    private readonly rpcUrl: string,
    private readonly now: () => number,
  ) {}

  /** The current status, or `unreachable`. */
  async poll(): Promise<string> {
    const a = await request(this.agent, this.rpcUrl, 'GET', '/health?detail', {}, null, HEALTH_TIMEOUT_MS);
    let status = 'unreachable';
    let reasons: string[] = [];
    if (!isTransportFailure(a)) {
      try {
        const body = JSON.parse(a.body) as { status?: unknown; reasons?: unknown };
        status = typeof body.status === 'string' ? body.status : `http_${a.status}`;
        reasons = Array.isArray(body.reasons) ? body.reasons.filter((r): r is string => typeof r === 'string') : [];
      } catch {
        status = `http_${a.status}`;
      }
    }
    return this.record(status, reasons);
  }

  private record(status: string, reasons: string[]): string {
    this.polls[status] = (this.polls[status] ?? 0) + 1;
    const key = status + ' ' + reasons.join(',');
    if (key !== this.last && this.transitions.length < MAX_TRANSITIONS) this.transitions.push({ t: this.now(), status, reasons });
    this.last = key;
    return status;
  }

  start(intervalMs: number): void {
    this.poller.start(intervalMs, () => this.poll());
  }

  stop(): void {
    this.poller.stop();
  }
}

export class BlockhashFollower {
  refreshed = 0;
  failures = 0;
  changes = 0;
  private readonly poller = new NonOverlappingInterval();

  constructor(
    private readonly agent: http.Agent,
    private readonly upstreamUrl: string,
    private readonly signer: TransferSigner,
  ) {}

  async refresh(): Promise<boolean> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLatestBlockhash', params: [{ commitment: 'confirmed' }] });
    const a = await request(this.agent, this.upstreamUrl, 'POST', '/', { 'content-type': 'application/json' }, body, BLOCKHASH_TIMEOUT_MS);
    if (!isTransportFailure(a) && a.status === 200) {
      try {
        const r = JSON.parse(a.body) as { result?: { value?: { blockhash?: unknown } } };
        const bh = r.result?.value?.blockhash;
        if (typeof bh === 'string') {
          if (bh !== this.signer.blockhash) this.changes++;
          this.signer.setBlockhash(bh);
          this.refreshed++;
          return true;
        }
      } catch {
        /* counted below */
      }
    }
    this.failures++;
    return false;
  }

  start(intervalMs: number): void {
    this.poller.start(intervalMs, () => this.refresh());
  }

  stop(): void {
    this.poller.stop();
  }
}

export interface OutcomeWindow {
  /** Seconds since the load started, at the end of the window. */
  readonly t: number;
  /** route -> outcome -> first sends in this window (non-zero only). */
  readonly outcomes: OutcomeTable;
  /** Ring depth summed over the rings at the end of the window. */
  readonly ringDepth: number;
}

/** Windows kept (one every few seconds). */
const MAX_WINDOWS = 2_000;

/** The relay's outcome counters per window, from /metrics: when each route sent, failed or dropped what. */
export class OutcomeTimeline {
  readonly windows: OutcomeWindow[] = [];
  scrapeFailures = 0;
  private prev: OutcomeTable = {};
  private readonly poller = new NonOverlappingInterval();

  constructor(
    private readonly agent: http.Agent,
    private readonly rpcUrl: string,
    private readonly now: () => number,
  ) {}

  async poll(): Promise<void> {
    const samples = await scrapeMetrics(this.agent, this.rpcUrl, HEALTH_TIMEOUT_MS);
    if (samples === null) {
      this.scrapeFailures++;
      return;
    }
    const cur = outcomesFromMetrics(samples);
    const delta: OutcomeTable = {};
    for (const [route, byOutcome] of Object.entries(cur)) {
      for (const [outcome, v] of Object.entries(byOutcome)) {
        const d = v - (this.prev[route]?.[outcome] ?? 0);
        if (d !== 0) (delta[route] ??= {})[outcome] = d;
      }
    }
    this.prev = cur;
    if (this.windows.length < MAX_WINDOWS) this.windows.push({ t: this.now(), outcomes: delta, ringDepth: sumMetric(samples, 'slotrelay_ring_depth') });
  }

  start(intervalMs: number): void {
    this.poller.start(intervalMs, () => this.poll());
  }

  stop(): void {
    this.poller.stop();
  }
}
