// Prints a fuzz run's summary (harness process; cold): classes with counts, cases/s, the families, and a few
// examples of every class that is not `expected` (request and answer, truncated) with the command that replays
// exactly those cases.
import { CLASSES, NON_FAILING, type FuzzSummary } from './harness.js';
import { formatPhase, phaseNotExpected } from './phase-summary.js';

/** Items not answered as specified, over the HTTP cases and every extra phase. */
export function notExpected(s: FuzzSummary): number {
  return CLASSES.filter((c) => !NON_FAILING.includes(c)).reduce((n, c) => n + s.counts[c], 0) + s.phases.reduce((n, p) => n + phaseNotExpected(p), 0);
}

function indent(text: string, by = '      '): string {
  return text.split('\n').map((l) => by + l).join('\n');
}

export function formatSummary(s: FuzzSummary): string {
  const out: string[] = [];
  out.push(`fuzz seed ${s.seed}: ${s.casesRun} of ${s.casesPlanned} cases in ${(s.elapsedMs / 1000).toFixed(1)} s (${s.casesPerSecond} cases/s)${s.truncated ? ' - stopped at the time bound' : ''}`);
  for (const c of CLASSES) out.push(`  ${c.padEnd(18)} ${s.counts[c]}`);
  out.push('  by family (run / not expected): ' + Object.entries(s.byFamily).map(([f, x]) => `${f} ${x.run}/${x.notExpected}`).join(', '));
  const a = s.accounting;
  out.push(`  ring accounting: ${a.accepted} answered accepted (+ up to ${a.unreported} unreported), egress consumed ${a.consumed}, released ${a.released}`);
  out.push('  upstream calls: ' + Object.entries(s.upstreamCalls).map(([m, n]) => `${m} ${n}`).join(', '));
  for (const c of CLASSES) {
    const list = s.examples[c];
    if (c === 'expected' || list === undefined || list.length === 0) continue;
    out.push('', `${c}: ${s.counts[c]} (${list.length} distinct patterns shown, one example each)`);
    for (const e of list) {
      out.push(`  [${e.count}x] #${e.index} ${e.family}: ${e.label.slice(0, 300)}`);
      out.push(`    why: ${e.detail}`);
      if (e.request !== '') out.push('    request:', indent(e.request));
      if (e.answer !== '') out.push('    answer:', indent(e.answer));
    }
    const idx = [...new Set(list.map((e) => e.index).filter((i) => i >= 0))];
    if (idx.length > 0) out.push(`  replay: node dist/scripts/fuzz/main.js --seed ${s.seed} --only ${idx.join(',')}`);
  }
  for (const p of s.phases) out.push('', formatPhase(p, s.seed));
  return out.join('\n');
}
