// Tests that run real threads load compiled JS from dist/ (a worker cannot run TypeScript). Builds dist/ with
// `npx tsc -p tsconfig.json` when any telemetry/front/shm source is newer than its output.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const WATCHED = ['src/telemetry', 'src/front', 'src/front/methods', 'src/http', 'src/admission', 'src/errors', 'src/config', 'src/jsonrpc', 'src/shm', 'workers', 'src', 'bench/telemetry'];

function stale(): boolean {
  for (const dir of WATCHED) {
    const abs = join(repoRoot, dir);
    if (!existsSync(abs)) continue;
    for (const f of readdirSync(abs)) {
      if (!f.endsWith('.ts')) continue;
      const js = join(repoRoot, 'dist', relative(repoRoot, join(abs, f))).replace(/\.ts$/, '.js');
      if (!existsSync(js) || statSync(js).mtimeMs < statSync(join(abs, f)).mtimeMs) return true;
    }
  }
  return false;
}

let checked = false;
export function ensureDistFresh(): void {
  if (checked) return;
  if (stale()) {
    try {
      execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: repoRoot, stdio: 'pipe' });
    } catch {
      /* type errors elsewhere still emit; checked below */
    }
    if (stale()) throw new Error('dist/ is stale after `npx tsc -p tsconfig.json`');
  }
  checked = true;
}

export function distUrl(path: string): string {
  return pathToFileURL(join(repoRoot, 'dist', path)).href;
}
