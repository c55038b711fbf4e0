// How `slotrelay doctor` prints its findings (cold, CLI only): aligned text for a person, or one JSON document
// (--json) for scripts: {"config", "ok", "counts", "findings": [Finding...]} (src/doctor/finding.ts).
import type { Finding, FindingStatus } from './finding.js';

export interface DoctorReport {
  /** The config file read; null for the built-in defaults. */
  readonly config: string | null;
  /** No finding failed (warnings and skips do not count). */
  readonly ok: boolean;
  readonly counts: Readonly<Record<FindingStatus, number>>;
  readonly findings: readonly Finding[];
}

export function makeReport(config: string | null, findings: readonly Finding[]): DoctorReport {
  const counts = { pass: 0, warn: 0, fail: 0, skip: 0 };
  for (const f of findings) counts[f.status]++;
  return { config, ok: counts.fail === 0, counts, findings };
}

export function renderText(r: DoctorReport): string {
  const width = Math.max(...r.findings.map((f) => f.check.length));
  const lines = [`slotrelay doctor: ${r.config ?? '(built-in defaults: no --config and no local/config.yaml)'}`];
  for (const f of r.findings) {
    lines.push(`${f.status.toUpperCase().padEnd(4)}  ${f.check.padEnd(width)}  ${f.detail}`);
    if (f.fix !== undefined) lines.push(`${' '.repeat(6 + width)}  fix: ${f.fix}`);
  }
  const c = r.counts;
  lines.push(`${c.pass} passed, ${c.warn} warning${c.warn === 1 ? '' : 's'}, ${c.fail} failed, ${c.skip} skipped: ${r.ok ? 'ready' : 'fix the failures above'}`);
  return lines.join('\n') + '\n';
}
