// Real nginx and HAProxy (Debian's packages, installed by scripts/ci/ensure-proxies.sh) in front of a relay, for the
// reverse-proxy test: each runs as its own process on 127.0.0.1 (a free high port) with its config in a temp dir,
// unprivileged (as `nobody` when the test runs as root), with the proxy's default settings for talking to an upstream.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ProxyBinaries {
  readonly nginx: string;
  readonly haproxy: string;
}

/** Runs scripts/ci/ensure-proxies.sh (installing the packages when missing): the binaries, or why there are none. */
export function ensureProxies(): ProxyBinaries | { readonly missing: string } {
  const r = spawnSync('bash', ['scripts/ci/ensure-proxies.sh'], { encoding: 'utf8', timeout: 600_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) return { missing: (r.stderr || r.error?.message || `exit ${String(r.status)}`).trim() };
  const [nginx, haproxy] = r.stdout.trim().split('\n').slice(-2);
  if (nginx === undefined || haproxy === undefined) return { missing: `ensure-proxies.sh printed ${JSON.stringify(r.stdout)}` };
  return { nginx, haproxy };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** `nobody` when we are root (the proxies never need root: high ports, files in their own temp dir). */
const NOBODY = 65534;
function unprivileged(): { uid?: number; gid?: number } {
  return process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : {};
}

export class ProxyProcess {
  readonly output: string[] = [];
  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    readonly dir: string,
  ) {
    child.stdout?.on('data', (d: Buffer) => this.output.push(d.toString()));
    child.stderr?.on('data', (d: Buffer) => this.output.push(d.toString()));
  }

  static async start(name: string, bin: string, args: (dir: string) => string[], config: (dir: string) => string, readyPort: number): Promise<ProxyProcess> {
    const dir = mkdtempSync(join(tmpdir(), `slotrelay-${name}-`));
    const who = unprivileged();
    writeFileSync(join(dir, `${name}.conf`), config(dir));
    chmodSync(dir, 0o755);
    if (who.uid !== undefined) chownSync(dir, who.uid, who.gid ?? who.uid);
    const child = spawn(bin, args(dir), { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir, ...who });
    const p = new ProxyProcess(name, child, dir);
    // Ready once its port accepts a connection (bounded: 10 s).
    const until = Date.now() + 10_000;
    while (!(await canConnect(readyPort))) {
      if (child.exitCode !== null) throw new Error(`${name} exited ${String(child.exitCode)}: ${p.output.join('')}`);
      if (Date.now() > until) throw new Error(`${name} did not listen on ${readyPort} within 10 s: ${p.output.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return p;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
      if (this.child.exitCode === null) this.child.kill('SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(port, '127.0.0.1');
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/** nginx with its default proxy settings (proxy_http_version 1.0, Connection: close): one server per upstream. */
export function nginxConfig(dir: string, routes: readonly { listen: number; upstream: string }[]): string {
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, d), { recursive: true });
  const servers = routes
    .map((r) => `  server {\n    listen 127.0.0.1:${r.listen};\n    location / {\n      proxy_pass ${r.upstream};\n    }\n  }\n`)
    .join('');
  return `daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${servers}}
`;
}

/**
 * HAProxy in front of the relay host: `option httpchk` as shipped (OPTIONS / HTTP/1.0, no Host) on one server and
 * `option httpchk GET /health` (HTTP/1.0 too) on another, checked every 300 ms; a stats page in CSV on statsPort.
 */
export function haproxyConfig(listen: number, statsPort: number, relay: string): string {
  return `global
  maxconn 256
defaults
  mode http
  timeout connect 2s
  timeout client 10s
  timeout server 10s
frontend relay_in
  bind 127.0.0.1:${listen}
  default_backend relay
backend relay
  option httpchk GET /health
  server health ${relay} check inter 300ms fall 2 rise 1
backend relay_plain_check
  option httpchk
  server plain ${relay} check inter 300ms fall 2 rise 1
frontend stats
  bind 127.0.0.1:${statsPort}
  stats enable
  stats uri /stats
`;
}

export interface ServerCheck {
  readonly backend: string;
  readonly server: string;
  readonly status: string;
  readonly checkStatus: string;
  readonly checkCode: string;
}

/** The servers' health as HAProxy's stats page reports it (CSV: pxname, svname, status, check_status, check_code). */
export async function haproxyServers(statsPort: number): Promise<ServerCheck[]> {
  const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text();
  const [head, ...rows] = csv.replace(/^# /, '').trim().split('\n');
  const cols = (head ?? '').split(',');
  const at = (name: string): number => cols.indexOf(name);
  return rows
    .map((r) => r.split(','))
    .filter((c) => c[at('svname')] !== 'FRONTEND' && c[at('svname')] !== 'BACKEND')
    .map((c) => ({ backend: c[at('pxname')] ?? '', server: c[at('svname')] ?? '', status: c[at('status')] ?? '', checkStatus: c[at('check_status')] ?? '', checkCode: c[at('check_code')] ?? '' }));
}
