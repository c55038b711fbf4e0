// Starts, kills and restarts the soak's stand-in peers (stand-in.ts: the jito block engine and the static QUIC peer),
// each its own process on a port that stays the same across restarts (driver process, cold).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export type StandInKind = 'jito' | 'static';

const READY_TIMEOUT_MS = 20_000;
const EXIT_TIMEOUT_MS = 5_000;

/** One process of a stand-in: its last reported count (a killed one's last second may be missing). */
interface Incarnation {
  readonly child: ChildProcess;
  received: number;
  /** Stopped by the driver (a fault or the end), not a crash. */
  expectedExit: boolean;
}

export class StandIn {
  private current: Incarnation | null = null;
  private readonly incarnations: Incarnation[] = [];
  private port = 0;
  /** Exits the driver did not cause (a crash of the stand-in itself). */
  unexpectedExits = 0;
  private stderrTail = '';

  constructor(
    readonly kind: StandInKind,
    private readonly scriptPath: string,
  ) {}

  get boundPort(): number {
    return this.port;
  }

  get running(): boolean {
    return this.current !== null;
  }

  get starts(): number {
    return this.incarnations.length;
  }

  /** Transactions the stand-in processes reported receiving, over every incarnation. */
  get received(): number {
    let n = 0;
    for (const i of this.incarnations) n += i.received;
    return n;
  }

  /** Start (first time on an ephemeral port, later on the same one). Resolves with the port. */
  async start(): Promise<number> {
    if (this.current !== null) return this.port;
    const child = spawn(process.execPath, [this.scriptPath, '--kind', this.kind, '--port', String(this.port)], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH },
    });
    const inc: Incarnation = { child, received: 0, expectedExit: false };
    this.current = inc;
    this.incarnations.push(inc);
    child.stderr!.on('data', (c: Buffer) => void (this.stderrTail = (this.stderrTail + c.toString('utf8')).slice(-2000)));
    child.once('exit', () => {
      if (!inc.expectedExit) this.unexpectedExits++;
      if (this.current === inc) this.current = null;
    });
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.kind} stand-in not ready: ${this.stderrTail}`)), READY_TIMEOUT_MS);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${this.kind} stand-in exited (${String(code)}) before ready: ${this.stderrTail}`));
      });
      createInterface({ input: child.stdout! }).on('line', (line) => {
        let m: { event?: string; port?: number; received?: number };
        try {
          m = JSON.parse(line) as typeof m;
        } catch {
          return;
        }
        if (m.event === 'stand_in_ready' && typeof m.port === 'number') {
          clearTimeout(timer);
          resolve(m.port);
        } else if (m.event === 'stand_in_stats' && typeof m.received === 'number') {
          inc.received = m.received;
        }
      });
    }).catch((err: unknown) => {
      this.kill('SIGKILL');
      throw err;
    });
    this.port = port;
    return port;
  }

  /** Stop it (SIGKILL for a fault: it vanishes mid-stream; SIGTERM at the end) and wait for the exit. */
  async stop(sig: NodeJS.Signals): Promise<void> {
    const inc = this.current;
    if (inc === null) return;
    inc.expectedExit = true;
    const child = inc.child;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    child.kill(sig);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, EXIT_TIMEOUT_MS)))]);
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (this.current === inc) this.current = null;
  }

  /** Cleanup on any path: no stand-in outlives the run. */
  kill(sig: NodeJS.Signals): void {
    const inc = this.current;
    if (inc === null) return;
    inc.expectedExit = true;
    this.current = null;
    if (inc.child.exitCode === null && inc.child.signalCode === null) inc.child.kill(sig);
  }
}
