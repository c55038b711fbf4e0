// A real redis-server for the cluster tests, started by scripts/cluster/start-redis.sh (which installs Redis when the
// machine lacks it) on a free 127.0.0.1 port; stop() and start() again on the same port model an engine outage.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from '../../helpers/free-port.js';

const SCRIPT = 'scripts/cluster/start-redis.sh';

/** One PING over a raw socket: true on +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    const done = (ok: boolean): void => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.once('error', () => done(false));
    sock.once('connect', () => sock.write('PING\r\n'));
    sock.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

export class RedisServer {
  private child: ChildProcess | null = null;
  readonly output: string[] = [];

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const r = new RedisServer(await freePort());
    await r.start();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(SCRIPT, [String(this.port)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: process.env.CI ?? 'true' } });
    this.child = child;
    child.stdout!.on('data', (d) => this.output.push(String(d)));
    child.stderr!.on('data', (d) => this.output.push(String(d)));
    // The first start may install Redis (apt-get, ~15 s) before the server listens.
    const deadline = Date.now() + 50_000;
    while (!(await ping(this.port))) {
      if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}):\n${this.output.join('')}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on ${this.port}:\n${this.output.join('')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGSTOP / SIGCONT: the engine stops answering but keeps its connections (a partition, as the relays see it). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** Stop the server (its data is gone: no persistence) and wait until the port refuses. */
  async stop(): Promise<void> {
    const c = this.child;
    this.child = null;
    if (c === null || c.exitCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGKILL');
    await exited;
  }
}
