// quinn-tpu-sink (../shared/peers/quinn-tpu-sink), built once into out/quinn by scripts/build-quinn-sink.sh (flock-
// serialized, so test files may ask at the same time). Only a machine without cargo may skip the interop tests;
// anywhere else a failed build fails the suite. QuinnSink runs one and reads what it prints.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

const root = path.resolve(import.meta.dirname, '../..');

export interface QuinnSinkBuild {
  /** The sink binary, or null when it cannot be built here (then `skipReason` says why). */
  readonly binary: string | null;
  readonly skipReason: string;
  /** Holds server.key.der and server.crt.der next to the binary. */
  readonly outDir: string;
}

export function buildQuinnSink(): QuinnSinkBuild {
  const outDir = path.join(root, 'out', 'quinn');
  try {
    const printed = execFileSync(path.join(root, 'scripts', 'build-quinn-sink.sh'), [outDir], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 600_000,
    });
    const binary = printed.trim().split('\n').at(-1) ?? null;
    if (binary === null || !existsSync(binary)) throw new Error(`build printed no binary: ${printed}`);
    return { binary, skipReason: '', outDir };
  } catch (e) {
    try {
      execFileSync('cargo', ['--version'], { stdio: 'ignore' });
    } catch {
      return { binary: null, skipReason: `quinn-tpu-sink not built (no cargo on this machine): ${(e as Error).message}`, outDir };
    }
    throw e;
  }
}

/** A running quinn-tpu-sink: its port and every stdout line (LISTEN, CONN, STATS ...), kept for matching. */
export class QuinnSink {
  readonly lines: string[] = [];
  private onLine: ((l: string) => void) | null = null;

  private constructor(
    private readonly child: ChildProcess,
    /** Set once the sink printed LISTEN. */
    public port = 0,
  ) {
    createInterface({ input: child.stdout! }).on('line', (l) => {
      this.lines.push(l);
      this.onLine?.(l);
    });
  }

  /** Starts the sink on `listen` (e.g. "127.0.0.1:0") with the build's certificate and `--max-uni maxUni`. */
  static async start(build: QuinnSinkBuild, listen: string, maxUni = 128): Promise<QuinnSink> {
    if (build.binary === null) throw new Error(build.skipReason);
    const child = spawn(
      build.binary,
      [listen, path.join(build.outDir, 'server.key.der'), path.join(build.outDir, 'server.crt.der'), '--max-uni', String(maxUni)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const sink = new QuinnSink(child);
    const line = await sink.waitLine((l) => l.startsWith('LISTEN '), 10_000);
    sink.port = Number(line.split(':').at(-1));
    return sink;
  }

  /** The first line (already printed or still to come) that matches; rejects after `ms`. */
  waitLine(match: (l: string) => boolean, ms: number): Promise<string> {
    const found = this.lines.find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no matching sink line; last: ${this.lines.slice(-3).join(' | ')}`)), ms);
      this.onLine = (l) => {
        if (match(l)) {
          clearTimeout(t);
          this.onLine = null;
          resolve(l);
        }
      };
    });
  }

  kill(): void {
    this.child.kill();
  }
}
