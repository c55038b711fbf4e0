// A real Prometheus (Debian's package, installed by scripts/ci/ensure-prometheus.sh) for tests: one process on
// 127.0.0.1 with its data in a temp dir, scraping the given targets every second and evaluating the given rule files
// every second; queried through its HTTP API like Grafana does.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort } from './free-port.js';

export interface PrometheusBinaries {
  readonly prometheus: string;
  readonly promtool: string;
}

/** Runs scripts/ci/ensure-prometheus.sh (installing the package when missing): the binaries, or why there are none. */
export function ensurePrometheus(): PrometheusBinaries | { readonly missing: string } {
  const r = spawnSync('bash', ['scripts/ci/ensure-prometheus.sh'], { encoding: 'utf8', timeout: 600_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) return { missing: (r.stderr || r.error?.message || `exit ${String(r.status)}`).trim() };
  const [prometheus, promtool] = r.stdout.trim().split('\n').slice(-2);
  return { prometheus, promtool };
}

export interface QueryResult {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

export class PrometheusProcess {
  readonly output: string[] = [];

  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
    private readonly dir: string,
  ) {}

  /** Starts Prometheus scraping `targets` (host:port) as job `job` at /metrics; resolves once its API answers. */
  static async start(bin: string, job: string, targets: readonly string[], ruleFiles: readonly string[]): Promise<PrometheusProcess> {
    const dir = mkdtempSync(join(tmpdir(), 'slotrelay-prometheus-'));
    const config = {
      global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
      rule_files: ruleFiles,
      scrape_configs: [{ job_name: job, metrics_path: '/metrics', static_configs: [{ targets }] }],
    };
    writeFileSync(join(dir, 'prometheus.yml'), stringify(config));
    const port = await freePort();
    const child = spawn(bin, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const p = new PrometheusProcess(`http://127.0.0.1:${port}`, child, dir);
    child.stdout!.on('data', (d) => p.output.push(String(d)));
    child.stderr!.on('data', (d) => p.output.push(String(d)));
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}):\n${p.output.join('')}`);
      try {
        if ((await fetch(`${p.url}/-/ready`)).status === 200) return p;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) throw new Error(`prometheus did not get ready:\n${p.output.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** An instant query (GET /api/v1/query); throws with Prometheus' error text on a bad expression. */
  async query(expr: string): Promise<QueryResult[]> {
    const res = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: QueryResult[] } };
    if (body.status !== 'success') throw new Error(`${expr}: ${body.error ?? res.status}`);
    if (body.data!.resultType !== 'vector') throw new Error(`${expr}: a ${body.data!.resultType}, not a vector`);
    return body.data!.result;
  }

  /** GET /api/v1/rules: every rule with its health and last error. */
  async rules(): Promise<{ name: string; type: string; health: string; lastError?: string; state?: string }[]> {
    const body = (await (await fetch(`${this.url}/api/v1/rules`)).json()) as { data: { groups: { rules: { name: string; type: string; health: string; lastError?: string; state?: string }[] }[] } };
    return body.data.groups.flatMap((g) => g.rules);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (this.child.exitCode === null) this.child.kill('SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
