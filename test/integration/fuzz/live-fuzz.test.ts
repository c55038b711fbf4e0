// The live fuzzer (scripts/fuzz, `make fuzz`) for a short run: 3,000 cases from a fixed seed against the real relay
// (dist/src/cli.js) on loopback, every path, each answer judged against docs/errors.md and docs/relay-api.md. Not
// one answer may fall outside `expected` (no unexpected status or answer, no invalid body, no hang, no crash, no
// relay log line at error level or with a stack trace). A failure prints the classes and one example per pattern,
// with the command that replays those cases.
import { describe, expect, it } from 'vitest';
import { CLASSES, NON_FAILING, runFuzz } from '../../../scripts/fuzz/harness.js';
import { formatSummary } from '../../../scripts/fuzz/report.js';
import { ensureDistFresh, repoRoot } from '../../unit/telemetry/dist-fresh.js';

const SEED = 18;
const CASES = 3_000;

describe('live fuzz (short run)', () => {
  it(`${CASES} cases from seed ${SEED}: every answer is the specified one`, async () => {
    ensureDistFresh();
    const summary = await runFuzz({ cases: CASES, seed: SEED, concurrency: 16, maxSeconds: 45, timeoutMs: 5_000, examples: 4, cwd: repoRoot });
    const report = formatSummary(summary);
    console.log(report.split('\n').slice(0, 10).join('\n'));
    expect(summary.casesRun, report).toBe(CASES);
    for (const c of CLASSES) {
      if (!NON_FAILING.includes(c)) expect(summary.counts[c], `${c}\n${report}`).toBe(0);
    }
    // The documented limitations (a request pipelined behind a submission or a JSON-RPC request: the connection closes
    // unanswered, nothing sent; a 413 lost to a reset: docs/known-issues.md) come only from the pipelined cases and
    // the rare 413 race; everything else is exactly the specified answer.
    expect(summary.counts.knownLimitation, report).toBeLessThanOrEqual((summary.byFamily.pipelined?.run ?? 0) + CASES / 1000);
    expect(summary.counts.expected + summary.counts.knownLimitation).toBe(CASES);
  }, 90_000);
});
