// Reads the relay's front-thread CPU profile (V8 --cpu-prof, written at exit) and splits its samples by the bench's
// runs (page closed / open, by their CLOCK_MONOTONIC windows, the clock V8 stamps samples with): per state, the
// front thread's busy time per request, how much of it ran under src/status/ (the page's tick: gathering, JSON,
// writes), and the functions whose self time per request differs most between the two states. Bench-only
// (page-cost.ts --profile); cold.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

export interface RunWindow {
  readonly page: 'closed' | 'open';
  readonly fromUs: number;
  readonly toUs: number;
  readonly requests: number;
}

interface StateFigures {
  readonly seconds: number;
  readonly requests: number;
  /** Front thread busy (not idle), us per request; of which under src/status/, GC, and native/unattributed. */
  readonly busyUsPerRequest: number;
  readonly statusUsPerRequest: number;
  readonly gcUsPerRequest: number;
  readonly programUsPerRequest: number;
  /** Time under src/status/ per second of the state. */
  readonly statusMsPerSecond: number;
}

export interface StatusShare {
  readonly samples: number;
  readonly closed: StateFigures;
  readonly open: StateFigures;
  /** Self time per request, open minus closed, us: the largest differences either way. */
  readonly selfUsPerRequestDelta: readonly { readonly fn: string; readonly closed: number; readonly open: number; readonly delta: number }[];
}

const r3 = (x: number): number => Number(x.toFixed(3));

/** The front thread's profile: the one whose stacks run src/front/ most (the workers' do not run it). */
function frontProfile(dir: string): CpuProfile | null {
  let best: { p: CpuProfile; front: number } | null = null;
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.cpuprofile'))) {
    const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile;
    const front = p.nodes.filter((n) => n.callFrame.url.includes('/src/front/')).length;
    if (front > 0 && (best === null || front > best.front)) best = { p, front };
  }
  return best?.p ?? null;
}

export function statusShare(dir: string, windows: readonly RunWindow[]): StatusShare | null {
  const p = frontProfile(dir);
  if (p === null) return null;
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(p.nodes.map((n) => [n.id, n] as const));
  const underStatus = new Map<number, boolean>();
  const isStatus = (id: number): boolean => {
    let v = underStatus.get(id);
    if (v !== undefined) return v;
    v = false;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) if (byId.get(at)!.callFrame.url.includes('/src/status/')) v = true;
    underStatus.set(id, v);
    return v;
  };
  const nameOf = (id: number): string => {
    const f = byId.get(id)!.callFrame;
    return f.url === '' ? f.functionName : `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(dist\/)?/, '')}:${f.lineNumber + 1}`;
  };
  const acc = {
    closed: { us: 0, req: 0, busy: 0, status: 0, gc: 0, program: 0, self: new Map<string, number>() },
    open: { us: 0, req: 0, busy: 0, status: 0, gc: 0, program: 0, self: new Map<string, number>() },
  };
  for (const w of windows) {
    acc[w.page].us += w.toUs - w.fromUs;
    acc[w.page].req += w.requests;
  }
  const sorted = [...windows].sort((a, b) => a.fromUs - b.fromUs);
  let t = p.startTime;
  let wi = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    const dt = p.timeDeltas[i + 1] ?? 0;
    while (wi < sorted.length && sorted[wi].toUs < t) wi++;
    if (wi >= sorted.length) break;
    const w = sorted[wi];
    if (t < w.fromUs) continue;
    const id = p.samples[i];
    const fn = byId.get(id)!.callFrame.functionName;
    if (fn === '(idle)') continue;
    const a = acc[w.page];
    a.busy += dt;
    if (fn === '(garbage collector)') a.gc += dt;
    else if (fn === '(program)') a.program += dt;
    if (isStatus(id)) a.status += dt;
    const name = nameOf(id);
    a.self.set(name, (a.self.get(name) ?? 0) + dt);
  }
  const figs = (a: typeof acc.closed): StateFigures => {
    const req = Math.max(1, a.req);
    return {
      seconds: r3(a.us / 1e6),
      requests: a.req,
      busyUsPerRequest: r3(a.busy / req),
      statusUsPerRequest: r3(a.status / req),
      gcUsPerRequest: r3(a.gc / req),
      programUsPerRequest: r3(a.program / req),
      statusMsPerSecond: r3(a.status / 1000 / Math.max(1e-9, a.us / 1e6)),
    };
  };
  const names = new Set([...acc.closed.self.keys(), ...acc.open.self.keys()]);
  const deltas = [...names].map((fn) => {
    const c = (acc.closed.self.get(fn) ?? 0) / Math.max(1, acc.closed.req);
    const o = (acc.open.self.get(fn) ?? 0) / Math.max(1, acc.open.req);
    return { fn, closed: r3(c), open: r3(o), delta: r3(o - c) };
  });
  deltas.sort((a, b) => b.delta - a.delta);
  return { samples: p.samples.length, closed: figs(acc.closed), open: figs(acc.open), selfUsPerRequestDelta: [...deltas.slice(0, 12), ...deltas.slice(-6)] };
}
