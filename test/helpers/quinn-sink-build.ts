// quinn-tpu-sink (../shared/peers/quinn-tpu-sink), built once into out/quinn by scripts/build-quinn-sink.sh (flock-
// serialized, so test files may ask at the same time). Only a machine without cargo may skip the interop tests;
// anywhere else a failed build fails the suite.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

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
