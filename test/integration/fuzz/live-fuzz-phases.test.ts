// The live fuzzer's extra phases (scripts/fuzz/quic-phase.ts, slow-clients.ts) at a tiny size, against the real relay
// (dist/src/cli.js) on loopback: QUIC ingress sessions of refused streams (one of each session type: mixed, stream-
// credit exhaustion, abandoned uni streams closed with code 5, the solana-tpu ALPN), junk-Initial bursts (small,
// medium, and one past the 200/s tokenless bucket) each followed by a good client that must connect and submit, and
// keep-alive slow clients (one of each kind, all at once: ~15 s of the relay's timers). Every item must be judged
// expected, except the slow clients the maintained prebuilt uWS build holds for its idle timeout (docs/known-issues.md;
// the default here is our source build, where none may be held).
import { describe, expect, it } from 'vitest';
import { CLASSES, NON_FAILING, runFuzz } from '../../../scripts/fuzz/harness.js';
import { phaseNotExpected } from '../../../scripts/fuzz/phase-summary.js';
import { formatSummary } from '../../../scripts/fuzz/report.js';
import { ensureDistFresh, repoRoot } from '../../unit/telemetry/dist-fresh.js';

const SEED = 30;

describe('live fuzz: QUIC ingress and keep-alive slow-client phases (short run)', () => {
  it(`seed ${SEED}: 8 QUIC sessions, 3 junk bursts, 10 slow clients, every item as documented`, async () => {
    ensureDistFresh();
    const summary = await runFuzz({
      cases: 100,
      seed: SEED,
      concurrency: 8,
      maxSeconds: 30,
      timeoutMs: 5_000,
      examples: 4,
      cwd: repoRoot,
      quicSessions: 8,
      junkBursts: 3,
      slowClients: 10,
      phaseMaxSeconds: 40,
    });
    const report = formatSummary(summary);
    console.log(report.split('\n').filter((l) => !l.startsWith('    ')).slice(-30).join('\n'));
    for (const c of CLASSES) if (!NON_FAILING.includes(c)) expect(summary.counts[c], `${c}\n${report}`).toBe(0);
    const [quic, slow] = summary.phases;
    expect(quic.name).toBe('QUIC ingress');
    expect(slow.name).toBe('keep-alive slow clients');
    expect(quic.run, report).toBe(8 + 3);
    expect(slow.run, report).toBe(10);
    for (const kind of ['mixed', 'exhaustion', 'abandoned', 'tpu mixed', 'tpu exhaustion', 'junk burst', 'Initial flood']) expect(quic.byKind[kind]?.run ?? 0, kind).toBeGreaterThan(0);
    for (const p of summary.phases) expect(phaseNotExpected(p), `${p.name}\n${report}`).toBe(0);
    // The bodies (after an answer, behind an early answer) are closed within the bound: only the request line, headers
    // and garbage kinds may be the known limitation, and only on the maintained prebuilt build (issue #30 item 9:
    // our source build and the legacy one close them within the bound too).
    expect(slow.counts.expected, report).toBeGreaterThanOrEqual(6);
    expect(slow.counts.expected + slow.counts.knownLimitation).toBe(10);
    expect(['source', 'maintained', 'legacy'], report).toContain(slow.figures['uWS build']);
    if (slow.figures['uWS build'] !== 'maintained') expect(slow.counts.knownLimitation, report).toBe(0);
  }, 90_000);
});
