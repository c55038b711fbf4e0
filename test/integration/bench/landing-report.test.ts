// `slotrelay bench landing` end to end: a short run (5 s at 20 tx/s, direct window-aware and rpc) on the embedded
// localnet through real relays, then its HTML report opened in headless Chromium and the screenshot inspected: each
// chart is found by its background colour and must hold what it draws (the CDF curves rising across their plot,
// landed % bars as tall as the JSON says, landings per slot under the leader bands).
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LandingReport } from '../../../src/landing-bench/report.js';
import { BARS_GEOMETRY, CDF_GEOMETRY, CHART_BACKGROUNDS, cdfAxisFloor, SET_COLOURS } from '../../../src/landing-bench/report-svg.js';
import { boxesOf, colourIn, decodePng, type Box, type Image } from '../../helpers/png.js';

const run = promisify(execFile);
const SEND_GREY = '#8a96a3';
const LEADER_BAND_0 = '#b9cde5';

describe('bench landing: JSON figures and the HTML report rendered in Chromium', () => {
  let dir: string;
  let report: LandingReport;
  let img: Image;

  beforeAll(async () => {
    // Installs Chromium from apt when the machine lacks it (scripts/ci/ensure-chromium.sh), then the harness run.
    const chromium = execFileSync('bash', ['scripts/ci/ensure-chromium.sh'], { encoding: 'utf8', timeout: 600_000 }).trim().split('\n').pop()!;
    dir = mkdtempSync(join(tmpdir(), 'landing-report-'));
    const out = join(dir, 'landing');
    await run(
      process.execPath,
      ['dist/src/cli.js', 'bench', 'landing', '--sets', 'direct:window-aware,rpc', '--rate', '20', '--duration', '5', '--tail', '10', '--payers', '2', '--out', out, '--quiet'],
      { timeout: 90_000 },
    );
    report = JSON.parse(readFileSync(`${out}.json`, 'utf8')) as LandingReport;
    const shot = join(dir, 'shot.png');
    await run(
      chromium,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--hide-scrollbars',
        '--force-color-profile=srgb',
        '--force-device-scale-factor=1',
        `--user-data-dir=${join(dir, 'profile')}`,
        '--window-size=1280,2400',
        `--screenshot=${shot}`,
        `file://${out}.html`,
      ],
      { timeout: 60_000 },
    );
    img = decodePng(readFileSync(shot));
  }, 600_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reports every transaction of both route sets, landed on the localnet within a few slots', () => {
    expect(report.scenarios).toHaveLength(1);
    const sets = report.scenarios[0].sets;
    expect(sets.map((s) => s.set.name)).toEqual(['direct (window-aware)', 'rpc']);
    for (const s of sets) {
      const f = s.figures;
      expect(f.sent).toBe(100);
      expect(f.landed + f.landedFailed + f.notLanded).toBe(f.sent);
      expect(f.landedPct).toBeGreaterThanOrEqual(90);
      expect(f.slotsToLand.p90).not.toBeNull();
      expect(f.slotsToLand.p90!).toBeLessThanOrEqual(4);
      expect(f.msToLandSource).toBe('localnet_executed');
      expect(f.msToLand.p50!).toBeGreaterThan(0);
      expect(f.cdf[f.cdf.length - 1]).toBeCloseTo(f.landedPct, 5);
      // Interleaved sets share the TPU counters: copies read are the run's, not a set's (issue #44).
      expect(f.copiesPerTx).toBeNull();
      expect(report.scenarios[0].runCounters!.copiesPerTx).toBeGreaterThanOrEqual(1);
      expect(f.relayView.receipts).toBe(f.accepted);
      expect(s.timeline.sends.reduce((a, b) => a + b, 0)).toBe(f.sent);
      expect(s.timeline.landings.reduce((a, b) => a + b, 0)).toBe(f.landed);
      expect(s.timeline.leaders.length).toBe(s.timeline.sends.length);
    }
    // Whose copy landed: the relay's own QUIC identity for direct, the RPC node's for rpc.
    expect(Object.keys(sets[0].figures.landedVia)).toEqual(['direct']);
    expect(Object.keys(sets[1].figures.landedVia)).toEqual(['rpc-node']);
  });

  it('reports time to processed and to finalized per route set, in ms and slots, as the relay learnt them (issue #43)', () => {
    const html = readFileSync(join(dir, 'landing.html'), 'utf8');
    expect(html).toContain('to processed ms (slots) p50 / p90 / p99');
    expect(html).toContain('to finalized ms (slots) p50 / p90 / p99');
    for (const s of report.scenarios[0].sets) {
      const { toProcessed, toFinalized } = s.figures;
      expect(toProcessed, s.set.name).toBeDefined();
      expect(toFinalized, s.set.name).toBeDefined();
      // Processed within a few slots of the send; finalized after it, within a few slots more (Alpenglow: ~150 ms).
      expect(toProcessed!.ms.p50!).toBeGreaterThan(0);
      expect(toProcessed!.ms.p90!).toBeGreaterThanOrEqual(toProcessed!.ms.p50!);
      expect(toProcessed!.slots.p90!).toBeLessThanOrEqual(4);
      expect(toFinalized!.ms.p50!).toBeGreaterThan(toProcessed!.ms.p50!);
      expect(toFinalized!.slots.p50!).toBeGreaterThanOrEqual(toProcessed!.slots.p50!);
      expect(toFinalized!.slots.p99!).toBeLessThanOrEqual(12);
      expect(html).toContain(`${toProcessed!.ms.p50} / ${toProcessed!.ms.p90} / ${toProcessed!.ms.p99}`);
      expect(html).toContain(`${toFinalized!.ms.p50} / ${toFinalized!.ms.p90} / ${toFinalized!.ms.p99}`);
    }
  });

  it('draws a CDF curve per route set that rises to its landed share and runs across the plot', () => {
    const boxes = boxesOf(img, CHART_BACKGROUNDS.cdf);
    expect(boxes).toHaveLength(1);
    const g = CDF_GEOMETRY;
    const b = boxes[0];
    expect(b.x1 - b.x0 + 1).toBe(g.width);
    // The plot area, a few pixels wider than the axes for the curves' stroke; the legend (right) left out.
    const plot: Box = { x0: b.x0 + g.left - 8, y0: b.y0 + g.top - 8, x1: b.x1 - g.right + 8, y1: b.y1 - g.bottom + 8 };
    const sets = report.scenarios[0].sets;
    const lo = cdfAxisFloor(sets.map((s) => ({ name: s.set.name, colour: s.colour, cdf: s.figures.cdf })));
    const plotHeight = g.height - g.top - g.bottom;
    sets.forEach((s, i) => {
      const c = colourIn(img, plot, SET_COLOURS[i]);
      expect(c.count, `CDF pixels of ${s.set.name}`).toBeGreaterThan(150);
      // The vertical rise at slot 0 from the axis floor to the share landed in the send slot and the steps after it
      // reach the landed share: the curve spans that height (less the stroke's cap), and the top sits where the
      // landed share is.
      const landed = s.figures.cdf[s.figures.cdf.length - 1];
      const expectedRise = (plotHeight * (landed - lo)) / (100 - lo);
      expect(c.box!.y1 - c.box!.y0, `rise of ${s.set.name}`).toBeGreaterThan(expectedRise - 4);
      const topY = b.y0 + g.top + (plotHeight * (100 - landed)) / (100 - lo);
      expect(Math.abs(c.box!.y0 + (3 + 4 * (sets.length - 1 - i)) / 2 - topY), `top of ${s.set.name}`).toBeLessThanOrEqual(3);
      expect(c.box!.x1 - c.box!.x0, `run of ${s.set.name}`).toBeGreaterThan((g.width - g.left - g.right) * 0.95);
    });
  });

  it('draws a landed % bar per route set as tall as the JSON says', () => {
    const boxes = boxesOf(img, CHART_BACKGROUNDS.bars);
    expect(boxes).toHaveLength(1);
    const b = boxes[0];
    const plotHeight = BARS_GEOMETRY.height - BARS_GEOMETRY.top - BARS_GEOMETRY.bottom;
    report.scenarios[0].sets.forEach((s, i) => {
      const c = colourIn(img, b, SET_COLOURS[i], 2);
      expect(c.count, `bar pixels of ${s.set.name}`).toBeGreaterThan(0);
      const height = c.box!.y1 - c.box!.y0 + 1;
      expect(Math.abs(height - (plotHeight * s.figures.landedPct) / 100), `bar height of ${s.set.name}`).toBeLessThanOrEqual(3);
    });
  });

  it('draws each set timeline: leader bands, sends above the axis, landings below in the set colour', () => {
    const boxes = boxesOf(img, CHART_BACKGROUNDS.timeline);
    expect(boxes).toHaveLength(2);
    boxes.forEach((b, i) => {
      const landed = colourIn(img, b, SET_COLOURS[i], 2);
      const sent = colourIn(img, b, SEND_GREY, 2);
      expect(landed.count, `landings of set ${i}`).toBeGreaterThan(200);
      expect(sent.count, `sends of set ${i}`).toBeGreaterThan(200);
      expect(landed.box!.y0, 'landings are drawn below the sends').toBeGreaterThan(sent.box!.y0);
      expect(colourIn(img, b, LEADER_BAND_0, 2).count, 'the largest-stake leader band').toBeGreaterThan(0);
      // The other set's colour is not in this timeline.
      expect(colourIn(img, b, SET_COLOURS[1 - i], 2).count).toBe(0);
    });
  });
});
