// The telemetry probe's handshakes run in the quic-egress thread (docs/architecture.md: every QUIC socket is there). Cold:
// one request per probe round. Relayed through the main thread, so a restarted telemetry or QUIC thread simply talks
// to whichever other end is current; a request nobody answers in time gets every target null (unmeasured).
import type { MessagePort } from 'node:worker_threads';
import { probeHandshakes, type ProbeResult, type ProbeTarget } from './probe.js';

export interface ProbeRequest {
  readonly type: 'probe';
  readonly id: number;
  readonly targets: readonly ProbeTarget[];
  readonly timeoutMs: number;
}

export interface ProbeAnswer {
  readonly type: 'probe-answer';
  readonly id: number;
  readonly results: readonly ProbeResult[];
}

export type Prober = (targets: readonly ProbeTarget[], timeoutMs: number) => Promise<ProbeResult[]>;

export function isProbeRequest(m: unknown): m is ProbeRequest {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'probe' && Array.isArray((m as { targets?: unknown }).targets);
}

export function isProbeAnswer(m: unknown): m is ProbeAnswer {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'probe-answer' && Array.isArray((m as { results?: unknown }).results);
}

/** Every target unmeasured (nobody could probe). */
export function unmeasured(targets: readonly ProbeTarget[]): ProbeResult[] {
  return targets.map((t) => ({ identity: t.identity, rttMs: null }));
}

/**
 * The asking end (telemetry thread, and main towards the quic-egress thread): posts requests with `post`, resolves them from
 * accept()ed answers; gives up after the probe's own time plus a margin (every target unmeasured).
 */
export class ProbeClient {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (r: ProbeResult[]) => void; timer: NodeJS.Timeout; targets: readonly ProbeTarget[] }>();

  constructor(private readonly post: (m: ProbeRequest) => void) {}

  readonly probe: Prober = (targets, timeoutMs) => {
    if (targets.length === 0) return Promise.resolve([]);
    const id = this.nextId++;
    return new Promise<ProbeResult[]>((resolve) => {
      // The quic-egress thread probes one target after the other: each may take timeoutMs.
      const timer = setTimeout(() => this.settle(id, null), targets.length * timeoutMs + 1_000);
      timer.unref();
      this.waiting.set(id, { resolve, timer, targets });
      try {
        this.post({ type: 'probe', id, targets, timeoutMs });
      } catch {
        this.settle(id, null);
      }
    });
  };

  /** An answer arrived (unknown or late ids are ignored). */
  accept(m: ProbeAnswer): void {
    this.settle(m.id, m.results);
  }

  /** Every open request ends unmeasured (the other end went away). */
  close(): void {
    for (const id of [...this.waiting.keys()]) this.settle(id, null);
  }

  private settle(id: number, results: readonly ProbeResult[] | null): void {
    const w = this.waiting.get(id);
    if (w === undefined) return;
    this.waiting.delete(id);
    clearTimeout(w.timer);
    w.resolve(results === null ? unmeasured(w.targets) : [...results]);
  }
}

/** The quic-egress thread's end: answers each request on `port` with its handshakes, one target after the other. */
export function serveProbes(port: MessagePort): void {
  port.on('message', (m: unknown) => {
    if (!isProbeRequest(m)) return;
    void probeHandshakes(m.targets, m.timeoutMs).then(
      (results) => port.postMessage({ type: 'probe-answer', id: m.id, results } satisfies ProbeAnswer),
      () => port.postMessage({ type: 'probe-answer', id: m.id, results: unmeasured(m.targets) } satisfies ProbeAnswer),
    );
  });
  port.unref();
}
