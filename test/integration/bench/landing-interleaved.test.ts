// `slotrelay bench landing` with its route sets interleaved in the same slots (issue #44 item 1), as a user runs it
// (a process, real relays, the embedded localnet): the report shows every set present in the same slots, each landed
// share inside its 95% interval, the difference against the best set with its interval; --repeat 2 adds the counts
// up; --sequential (the method before) shows sets that met different slots; --source pubsub,grpc (issue #46 item 3)
// gives each set a row per source, each on a relay that says it stands on that source.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { LandingReport } from '../../../src/landing-bench/report.js';

const run = promisify(execFile);
const SHORT = ['--rate', '20', '--duration', '4', '--tail', '8', '--payers', '2', '--warmup', '1'];

async function bench(args: readonly string[]): Promise<{ report: LandingReport; stderr: string; html: string }> {
  const out = join(mkdtempSync(join(tmpdir(), 'landing-interleaved-')), 'landing');
  const { stderr } = await run(process.execPath, ['dist/src/cli.js', 'bench', 'landing', ...args, ...SHORT, '--out', out], { timeout: 150_000 });
  return { report: JSON.parse(readFileSync(`${out}.json`, 'utf8')) as LandingReport, stderr, html: readFileSync(`${out}.html`, 'utf8') };
}

describe('bench landing: route sets interleaved in the same slots', () => {
  it('every set sees the same slots; shares sit inside their intervals; --repeat 2 merges the counts', async () => {
    const { report, html } = await bench(['--sets', 'direct:window-aware,rpc,direct+rpc', '--repeat', '2']);
    const sc = report.scenarios[0];
    expect(report.params.method).toBe('interleaved');
    expect(sc.interleave).toMatchObject({ method: 'interleaved', repeat: 2 });
    const i = sc.interleave!;
    // 20 tx/s per set for 4 s: 80 per set per repeat, dealt in turn, so 160 each after two repeats.
    for (const s of sc.sets) expect(s.figures.sent, s.set.name).toBe(160);
    // 60 tx/s over 250 ms slots: ~15 a slot, every set in each; allow a slot or two the bench's loop delay thinned.
    expect(i.slots).toBeGreaterThanOrEqual(20);
    expect(i.slotsWithEverySet).toBeGreaterThanOrEqual(i.slots - 2);
    for (const s of sc.sets) expect(s.figures.slotsPresent!, s.set.name).toBeGreaterThanOrEqual(i.slots - 2);
    for (const s of sc.sets) {
      const f = s.figures;
      const ci = f.landedCi95!;
      expect(0 <= ci.lo && ci.lo <= f.landedPct && f.landedPct <= ci.hi && ci.hi <= 100, `${s.set.name} ${JSON.stringify(ci)} ${f.landedPct}`).toBe(true);
      expect(ci.hi - ci.lo).toBeGreaterThan(0);
      expect(f.landed).toBeGreaterThan(150);
      expect(html).toContain(`95%: ${ci.lo}-${ci.hi}%`);
    }
    // Against the best: one row per other set, its interval around its difference; near-equal shares: not significant.
    const best = sc.sets.reduce((a, b) => (b.figures.landed > a.figures.landed ? b : a));
    expect(sc.comparisons!.map((c) => c.set).sort()).toEqual(sc.sets.filter((s) => s !== best).map((s) => s.set.name).sort());
    for (const c of sc.comparisons!) {
      expect(c.against).toBe(best.set.name);
      expect(c.lo).toBeLessThanOrEqual(c.diffPct);
      expect(c.hi).toBeGreaterThanOrEqual(c.diffPct);
      expect(c.significant).toBe(c.lo > 0 || c.hi < 0);
      if (!c.significant) expect(html).toContain('not significant');
    }
    // The TPU counters are the run's: every copy of both repeats.
    expect(sc.runCounters!.sent).toBe(480);
    expect(sc.runCounters!.copiesPerTx).toBeGreaterThanOrEqual(1);
  }, 200_000);

  it('--sequential: the sets met different slots (the method issue #44 replaced)', async () => {
    const { report } = await bench(['--sets', 'direct:window-aware,rpc', '--sequential']);
    const sc = report.scenarios[0];
    expect(sc.interleave!.method).toBe('sequential');
    expect(sc.interleave!.slotsWithEverySet).toBe(0);
    const [a, b] = sc.sets.map((s) => s.figures.sendSlots!);
    expect(a.last < b.first || b.last < a.first).toBe(true);
  }, 200_000);

  it('--source pubsub,grpc: each set on both sources in the same run, with slots-to-land and time to processed per row', async () => {
    const { report, stderr } = await bench(['--sets', 'direct', '--source', 'pubsub,grpc']);
    const sc = report.scenarios[0];
    expect(report.params.sources).toEqual(['pubsub', 'grpc']);
    expect(sc.sets.map((s) => s.set.name)).toEqual(['direct@pubsub (window-aware)', 'direct@grpc (window-aware)']);
    expect(stderr).toMatch(/direct@pubsub \(window-aware\): the relay's slot source at the end: pubsub/);
    expect(stderr).toMatch(/direct@grpc \(window-aware\): the relay's slot source at the end: grpc/);
    expect(sc.interleave!.slotsWithEverySet).toBeGreaterThanOrEqual(sc.interleave!.slots - 2);
    for (const s of sc.sets) {
      expect(s.figures.sent).toBe(80);
      expect(s.figures.landed / s.figures.sent).toBeGreaterThan(0.9);
      expect(s.figures.slotsToLand.p90).not.toBeNull();
      expect(s.figures.toProcessed!.ms.p50!).toBeGreaterThan(0);
    }
  }, 200_000);
});
