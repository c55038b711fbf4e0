// Text summary of V8 CPU profiles (node --cpu-prof: one .cpuprofile per thread) for docs/wire-to-wire.md (bench
// process, cold). Per profile: the thread (guessed from its top frames), sampled time, share idle / GC / program, the
// functions with the most self time, and a top-down tree of the hottest paths (inclusive time, pruned below 2%).
//   node dist/bench/wire/profile-summary.js DIR|FILE... [--top 15] [--depth 8]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const opt = (n: string, d: number): number => (args.includes(`--${n}`) ? Number(args[args.indexOf(`--${n}`) + 1]) : d);
const TOP = opt('top', 15);
const DEPTH = opt('depth', 8);
const files = args
  .filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')))
  .flatMap((a) => (statSync(a).isDirectory() ? readdirSync(a).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(a, f)) : [a]));

const name = (n: Node): string => {
  const f = n.callFrame;
  const file = f.url === '' ? '' : ` ${f.url.replace(/^file:\/\/.*?\/dist\//, '').replace(/^node:/, 'node:')}:${f.lineNumber + 1}`;
  return `${f.functionName || '(anonymous)'}${file}`;
};

for (const file of files) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  // Self time per node from the samples (timeDeltas[i] is the time before sample i, us).
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const incl = new Map<number, number>();
  const inclusive = (id: number): number => {
    const n = byId.get(id)!;
    let t = self.get(id) ?? 0;
    for (const c of n.children ?? []) t += inclusive(c);
    incl.set(id, t);
    return t;
  };
  inclusive(p.nodes[0].id);
  const bySelf = new Map<string, number>();
  for (const [id, t] of self) {
    const k = name(byId.get(id)!);
    bySelf.set(k, (bySelf.get(k) ?? 0) + t);
  }
  const cat = (fn: string): number => [...self].filter(([id]) => byId.get(id)!.callFrame.functionName === fn).reduce((a, [, t]) => a + t, 0);
  const idle = cat('(idle)');
  const gc = cat('(garbage collector)');
  const pct = (t: number): string => `${((100 * t) / Math.max(1, total)).toFixed(1)}%`;
  const busy = total - idle;
  console.log(`\n## ${basename(file)}: ${(total / 1e6).toFixed(2)} s sampled, idle ${pct(idle)}, GC ${pct(gc)}, busy ${(busy / 1e6).toFixed(2)} s`);
  console.log(`\nself time (share of busy):`);
  for (const [k, t] of [...bySelf].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`  ${((100 * t) / Math.max(1, busy)).toFixed(1).padStart(5)}%  ${(t / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  }
  console.log(`\ntop-down (inclusive, share of busy, >= 2%):`);
  const walk = (id: number, depth: number): void => {
    const n = byId.get(id)!;
    const t = incl.get(id) ?? 0;
    if (n.callFrame.functionName === '(idle)' || (t * 50 < busy && depth > 0) || depth > DEPTH) return;
    if (depth > 0) console.log(`  ${'  '.repeat(depth - 1)}${((100 * t) / Math.max(1, busy)).toFixed(1)}% ${name(n)}`);
    for (const c of [...(n.children ?? [])].sort((a, b) => (incl.get(b) ?? 0) - (incl.get(a) ?? 0))) walk(c, depth + 1);
  };
  walk(p.nodes[0].id, 0);
}
