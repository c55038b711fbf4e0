// The summary of one of the live fuzzer's extra phases (QUIC ingress, keep-alive slow clients) (harness process;
// cold): its own classes with counts, per-kind figures, and one example per distinct pattern of every class that is
// not expected. Shared by quic-phase.ts and slow-clients.ts; printed by report.ts, written into the run's JSON.

export interface PhaseExample {
  readonly pattern: string;
  count: number;
  readonly kind: string;
  /** Case index within the phase (its rng is caseRng(seed, base + index)), -1 when none. */
  readonly index: number;
  readonly detail: string;
}

export interface PhaseSummary {
  readonly name: string;
  /** Every class of the phase, in report order; `nonFailing` ones do not fail a run. */
  readonly classes: readonly string[];
  readonly nonFailing: readonly string[];
  readonly counts: Record<string, number>;
  readonly byKind: Record<string, { run: number; notExpected: number }>;
  readonly examples: Record<string, PhaseExample[]>;
  /** Measured figures (connect times, close times, replies), for the report. */
  readonly figures: Record<string, number | string>;
  run: number;
  elapsedMs: number;
  truncated: boolean;
}

export function newPhase(name: string, classes: readonly string[], nonFailing: readonly string[]): PhaseSummary {
  return {
    name,
    classes,
    nonFailing,
    counts: Object.fromEntries(classes.map((c) => [c, 0])),
    byKind: {},
    examples: {},
    figures: {},
    run: 0,
    elapsedMs: 0,
    truncated: false,
  };
}

/** Records one judged item of `kind` in class `cls` (examples: one per pattern, at most `maxExamples` a class). */
export function notePhase(p: PhaseSummary, cls: string, kind: string, index: number, detail: string, maxExamples: number): void {
  if (!(cls in p.counts)) throw new Error(`phase ${p.name}: unknown class ${cls}`);
  p.counts[cls]++;
  const k = (p.byKind[kind] ??= { run: 0, notExpected: 0 });
  k.run++;
  if (p.nonFailing.includes(cls) && cls === 'expected') return;
  if (!p.nonFailing.includes(cls)) k.notExpected++;
  const pattern = `${kind}: ${detail.replace(/\d+/g, 'N').slice(0, 200)}`;
  const list = (p.examples[cls] ??= []);
  const seen = list.find((e) => e.pattern === pattern);
  if (seen !== undefined) seen.count++;
  else if (list.length < maxExamples) list.push({ pattern, count: 1, kind, index, detail: detail.slice(0, 1500) });
}

export function phaseNotExpected(p: PhaseSummary): number {
  return p.classes.filter((c) => !p.nonFailing.includes(c)).reduce((n, c) => n + p.counts[c], 0);
}

export function formatPhase(p: PhaseSummary, seed: number): string {
  const out: string[] = [];
  out.push(`${p.name}: ${p.run} items in ${(p.elapsedMs / 1000).toFixed(1)} s${p.truncated ? ' - stopped at the time bound' : ''}`);
  for (const c of p.classes) out.push(`  ${c.padEnd(22)} ${p.counts[c]}`);
  out.push('  by kind (run / not expected): ' + Object.entries(p.byKind).map(([k, x]) => `${k} ${x.run}/${x.notExpected}`).join(', '));
  const figs = Object.entries(p.figures);
  if (figs.length > 0) out.push('  figures: ' + figs.map(([k, v]) => `${k} ${v}`).join(', '));
  for (const c of p.classes) {
    const list = p.examples[c];
    if (c === 'expected' || list === undefined || list.length === 0) continue;
    out.push(`  ${c}: ${p.counts[c]} (${list.length} distinct patterns shown)`);
    for (const e of list) out.push(`    [${e.count}x] #${e.index} ${e.kind}: ${e.detail.split('\n').join('\n      ')}`);
  }
  if (phaseNotExpected(p) > 0) out.push(`  replay: node dist/scripts/fuzz/main.js --seed ${seed} (phases are rebuilt from the seed)`);
  return out.join('\n');
}
