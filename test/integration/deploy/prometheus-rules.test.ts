// deploy/ checked by the real tools (docs/monitoring.md): Prometheus from Debian's packages
// (scripts/ci/ensure-prometheus.sh installs it where missing). promtool checks the rules and runs their unit tests
// (deploy/prometheus/tests/), which must cover every alert both firing and not firing, and which fail on a rule made
// wrong; every alert's runbook link must land on a section of deploy/prometheus/runbook.md. Then a real Prometheus
// (127.0.0.1, temp dir, 1 s scrapes and rule evaluations) scrapes a real relay on the embedded localnet (direct route,
// QUIC ingress, PubSub, a cluster engine on a real redis-server), and every PromQL expression of the Grafana
// dashboard (deploy/grafana/slotrelay.json, template variables replaced) must return at least one series through
// Prometheus' HTTP API: a panel on a metric the relay does not export fails here.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PubsubClient } from '../../helpers/pubsub-client.js';
import { ensurePrometheus, PrometheusProcess, type PrometheusBinaries } from '../../helpers/prometheus-process.js';
import { OTHER_KEY, startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';
import { RedisServer } from '../cluster/redis-server.js';

const RULES = resolve('deploy/prometheus/slotrelay.rules.yml');
const TESTS_DIR = resolve('deploy/prometheus/tests');
const RUNBOOK = resolve('deploy/prometheus/runbook.md');
const DASHBOARD = resolve('deploy/grafana/slotrelay.json');
const JOB = 'slotrelay';

interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly annotations?: Record<string, string>;
}
interface AlertTest {
  readonly alertname: string;
  readonly exp_alerts?: unknown[];
}

const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const alerts = rules.filter((r) => r.alert !== undefined);
const testFiles = readdirSync(TESTS_DIR).filter((f) => f.endsWith('.yml')).map((f) => join(TESTS_DIR, f));

interface Panel {
  readonly title?: string;
  readonly type: string;
  readonly id: number;
  readonly datasource?: { type: string; uid: string };
  readonly targets?: { expr: string }[];
  readonly panels?: Panel[];
  readonly gridPos: { x: number; w: number };
}
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
  __inputs: { name: string; type: string; pluginId: string }[];
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: { query: string } | string }[] };
};
const allPanels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);

/** The dashboard's variables as the test sets them: every relay of the job, a rate window of 5 scrapes. */
function concrete(expr: string): string {
  const out = expr.replaceAll('$__rate_interval', '5s').replaceAll('$job', JOB).replaceAll('$instance', '.*');
  if (out.includes('$')) throw new Error(`an unreplaced variable in ${expr}`);
  return out;
}

function promtool(bins: PrometheusBinaries, args: string[]): { status: number | null; out: string } {
  const r = spawnSync(bins.promtool, args, { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

// Installing is allowed (CI runs on a clean machine); skipped only where it is impossible, saying why.
const bins = ensurePrometheus();
const missing = 'missing' in bins ? bins.missing : null;
if (missing !== null) console.warn(`deploy/ Prometheus checks skipped: ${missing}`);

describe.skipIf(missing !== null)('deploy/prometheus rules (promtool)', () => {
  const b = bins as PrometheusBinaries;

  it('promtool check rules accepts the rules file', () => {
    const r = promtool(b, ['check', 'rules', RULES]);
    expect(r.out).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(r.status).toBe(0);
  });

  it('promtool test rules passes, and every alert is tested firing and not firing', () => {
    const r = promtool(b, ['test', 'rules', ...testFiles]);
    expect(r.status, r.out).toBe(0);
    const cases = testFiles.flatMap((f) => (parse(readFileSync(f, 'utf8')) as { tests: { alert_rule_test?: AlertTest[] }[] }).tests.flatMap((t) => t.alert_rule_test ?? []));
    const untested = alerts
      .map((a) => a.alert!)
      .filter((name) => {
        const mine = cases.filter((c) => c.alertname === name);
        return !mine.some((c) => (c.exp_alerts ?? []).length > 0) || !mine.some((c) => (c.exp_alerts ?? []).length === 0);
      });
    expect(untested).toEqual([]);
  });

  it('the unit tests fail on a rule made wrong (SlotrelayDown without its `for`, SlotrelayOverloaded on any refusal)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'slotrelay-rules-'));
    const text = readFileSync(RULES, 'utf8');
    const broken = text
      .replace(/(expr: up\{job="slotrelay"\} == 0\n\s+for: )1m/, '$10s')
      .replace('reason="overloaded"}[1m]', 'reason=~".+"}[1m]');
    expect(broken).not.toBe(text);
    writeFileSync(join(dir, 'slotrelay.rules.yml'), broken);
    // The test files name ../slotrelay.rules.yml: copies one level below the broken rules.
    const tdir = join(dir, 'tests');
    mkdirSync(tdir);
    for (const f of testFiles) writeFileSync(join(tdir, f.split('/').pop()!), readFileSync(f));
    const r = promtool(b, ['test', 'rules', ...readdirSync(tdir).map((f) => join(tdir, f))]);
    rmSync(dir, { recursive: true, force: true });
    expect(r.status).not.toBe(0);
    expect(r.out).toContain('alertname: SlotrelayDown');
    expect(r.out).toContain('alertname: SlotrelayOverloaded');
  });

  it('every alert has a summary, a severity and a runbook link to a section of deploy/prometheus/runbook.md', () => {
    const runbook = readFileSync(RUNBOOK, 'utf8');
    // GitHub's heading anchors: lower case, spaces to dashes, punctuation dropped.
    const anchors = new Set([...runbook.matchAll(/^#+ (.+)$/gm)].map((m) => m[1].toLowerCase().replace(/[^a-z0-9 -]/g, '').replaceAll(' ', '-')));
    const bad = alerts.filter((a) => {
      const link = a.annotations?.runbook ?? '';
      const anchor = link.split('#')[1] ?? '';
      return !link.startsWith('deploy/prometheus/runbook.md#') || !anchors.has(anchor) || anchor !== a.alert!.toLowerCase() || !a.annotations?.summary;
    });
    expect(bad.map((a) => a.alert)).toEqual([]);
  });
});

describe('deploy/grafana dashboard (static)', () => {
  it('is an importable dashboard: a DS_PROMETHEUS input every panel uses, unique ids, panels within the 24-column grid', () => {
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' })]);
    const data = allPanels.filter((p) => p.type !== 'row');
    expect(data.length).toBeGreaterThan(20);
    for (const p of data) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
      expect(p.targets?.length ?? 0, p.title).toBeGreaterThan(0);
    }
    expect(new Set(allPanels.map((p) => p.id)).size).toBe(allPanels.length);
    for (const p of allPanels) expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
  });
});

describe.skipIf(missing !== null)('deploy/ against a real Prometheus scraping a real relay', () => {
  let redis: RedisServer | undefined;
  let relay: RelayHandle | undefined;
  let prom: PrometheusProcess | undefined;

  beforeAll(async () => {
    redis = await RedisServer.start();
    relay = await startRelay({
      relayHost: { host: '127.0.0.1', port: 0, quicPort: -1 },
      routes: { direct: { enabled: true }, defaultRoutes: ['rpc', 'direct'] },
      cluster: { url: redis.url },
    });
    prom = await PrometheusProcess.start((bins as PrometheusBinaries).prometheus, JOB, [new URL(relay.rpcUrl).host], [RULES]);
  }, 90_000);

  afterAll(async () => {
    await prom?.stop();
    await relay?.stop();
    await redis?.stop();
  });

  it('every PromQL expression of the dashboard returns series; rules evaluate without error; the unstaked identity is pending', async () => {
    const relayUrl = relay!.rpcUrl;
    await waitFor('Prometheus scraping the relay', async () => (await prom!.query(`up{job="${JOB}"} == 1`)).length, (n) => n === 1, 15_000, 250);

    // Traffic a dashboard shows: sends (accepted; rate-limited; unauthorized), a REST submit, a bundle, a subscribe.
    const rpc = async (key: string, method: string, params: unknown[]): Promise<number> => {
      const res = await fetch(relayUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
      await res.text();
      return res.status;
    };
    for (let i = 0; i < 3; i++) expect(await rpc(TEST_KEY, 'sendTransaction', [legacyTransfer().base64, { encoding: 'base64', skipPreflight: true }])).toBe(200);
    for (let i = 0; i < 5; i++) await rpc(OTHER_KEY, 'sendTransaction', [legacyTransfer().base64, { encoding: 'base64', skipPreflight: true }]);
    expect(await rpc('00000000-0000-4000-8000-000000000000', 'getSlot', [])).toBe(401);
    await rpc(TEST_KEY, 'sendBundle', [[legacyTransfer().base64], { encoding: 'base64' }]);
    const submit = await fetch(`${relay!.relayUrl}/v1/submit`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY }, body: JSON.stringify({ transaction: legacyTransfer().base64 }) });
    expect(submit.status).toBe(200);
    const ws = await PubsubClient.open(`${relay!.wsUrl}/?key=${TEST_KEY}`);
    await ws.call('slotSubscribe');
    ws.close();

    const exprs = [...new Set(allPanels.flatMap((p) => (p.targets ?? []).map((t) => concrete(t.expr))))];
    // The template variables' own queries: label_values(<selector>, label) needs <selector> to have series.
    for (const v of dashboard.templating.list) {
      const q = typeof v.query === 'object' ? v.query.query : '';
      const m = /^label_values\((.+), *\w+\)$/.exec(q);
      if (m !== null) exprs.push(concrete(m[1]));
    }
    const empty = async (): Promise<string[]> => {
      const out: string[] = [];
      for (const e of exprs) if ((await prom!.query(e)).length === 0) out.push(e);
      return out;
    };
    // Rates need two scrapes after the traffic, summaries their first observation: bounded wait, then name each miss.
    let last: string[] = [];
    await waitFor('every dashboard expression to return series', async () => (last = await empty()), (l) => l.length === 0, 20_000, 500).catch(() => undefined);
    expect(last, `dashboard expressions with no series:\n${last.join('\n')}`).toEqual([]);
    expect(exprs.length).toBeGreaterThan(50);

    // The same check fails on a metric the relay does not export.
    expect(await prom!.query(concrete(exprs[0].replace('up{', 'slotrelay_no_such_metric{')))).toEqual([]);

    // Every recording and alerting rule evaluates against the relay's real series without error.
    const evaluated = await prom!.rules();
    expect(evaluated.length).toBe(rules.length);
    expect(evaluated.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.health} ${r.lastError ?? ''}`)).toEqual([]);
    // The localnet relay's generated identity is unstaked: its alert is pending (for: 15m), no other alert is active.
    // (The rule runs every second: its first evaluation after the stake's first scrape may still be to come.)
    const active = await waitFor('the identity alert pending', () => prom!.query('ALERTS'), (a) => a.some((x) => x.metric.alertname === 'SlotrelayIdentityUnstaked'), 5_000, 250).catch(() => prom!.query('ALERTS'));
    expect(active.map((a) => `${a.metric.alertname} ${a.metric.alertstate}`)).toEqual(['SlotrelayIdentityUnstaked pending']);
  }, 60_000);
});
