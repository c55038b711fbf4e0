// The landing report's HTML is self-contained (no script, no external resource of any kind) and carries one chart of
// each kind per scenario and set, from a report made by hand.
import { describe, expect, it } from 'vitest';
import type { LandingReport } from '../../../src/landing-bench/report.js';
import { renderHtml } from '../../../src/landing-bench/report-html.js';
import { SET_COLOURS } from '../../../src/landing-bench/report-svg.js';
import type { SetFigures } from '../../../src/landing-bench/stats.js';

const pct = { p50: 0, p90: 1, p99: 2, max: 3, mean: 0.4 };
const figures: SetFigures = {
  sent: 10,
  accepted: 10,
  landed: 9,
  landedFailed: 0,
  notLanded: 1,
  landedPct: 90,
  slotsToLand: pct,
  msToLand: pct,
  msToLandSource: 'localnet_executed',
  cdf: [50, 80, 90],
  dropReasons: { not_landed: 1, '<script>': 1 },
  duplicates: 2,
  copiesPerTx: 1.5,
  landedVia: { direct: 9 },
  relayView: { receipts: 10, slotsToLand: pct, rebroadcasts: 0, firstRoute: { direct: 10 } },
  submitMs: pct,
  benchLoopDelayMs: { p50: 1, p99: 2, max: 3 },
};

const report: LandingReport = {
  tool: 'slotrelay bench landing',
  version: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  commit: 'abc1234',
  host: { cpus: 2, node: 'v20', platform: 'linux x64', loadAvg1m: [1, 2] },
  params: { ratePerSecond: 10, durationMs: 1000, tailMs: 1000, payers: 1, maxRetries: null, target: 'embedded localnet', command: 'slotrelay bench landing' },
  scenarios: [0, 1].map((n) => ({
    scenario: { name: `s${n}`, slotMs: 400, leaderLossPct: 0, leaderTxDropPct: 0, qos: true, linkDelayMs: 0, rpcDelayMs: 0, qosModel: 'throttle', capacityTps: null, blockCapacity: null, competitor: null, relayStakeSol: 0, rpcStakeSol: 0, jitoStakeSol: 0 },
    validators: [{ identity: 'V1', stake: 1, label: 'V1 (100% stake)' }],
    slotSource: 'slotSubscribe',
    localnet: {},
    sets: ['direct (window-aware)', 'rpc'].map((name, i) => ({
      set: { name, routes: [i === 0 ? 'direct' : 'rpc'], fanout: null },
      colour: SET_COLOURS[i],
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T00:00:01.000Z',
      relayIdentity: null,
      figures,
      timeline: { from: 5, sends: [5, 5], landings: [4, 5], lost: [1, 0], leaders: ['V1', 'V1'] },
    })),
  })),
  notes: ['a note'],
};

describe('landing report HTML', () => {
  const html = renderHtml(report);

  it('loads nothing and runs nothing', () => {
    expect(html).not.toMatch(/<script|<link|<img|<iframe|src=|url\(|@import/i);
    // Text from the data is escaped, so a drop reason cannot inject markup.
    expect(html).toContain('&lt;script&gt;');
  });

  it('has the bars once, a CDF per scenario and a timeline per set', () => {
    expect(html.match(/<svg class="chart bars"/g)).toHaveLength(1);
    expect(html.match(/<svg class="chart cdf"/g)).toHaveLength(2);
    expect(html.match(/<svg class="chart timeline"/g)).toHaveLength(4);
    expect(html).toContain(`stroke="${SET_COLOURS[1]}"`);
  });
});
