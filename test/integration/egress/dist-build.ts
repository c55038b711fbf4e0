// Tests that need real worker threads run the compiled JS in dist/ (worker files cannot be TypeScript). This makes
// sure dist/ is at least as new as the egress/shm sources, building it (npx tsc -p tsconfig.json) when it is not.
// tsc emits even when an unrelated file in the repo has a type error, so only the outputs are checked.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

const WATCHED = ['src/shm', 'src/egress', 'src/metrics', 'src/log', 'src/config', 'workers', 'bench/shm'];

function sources(): string[] {
  const out: string[] = [];
  for (const dir of WATCHED) {
    const abs = join(repoRoot, dir);
    if (!existsSync(abs)) continue;
    for (const f of readdirSync(abs)) if (f.endsWith('.ts')) out.push(join(abs, f));
  }
  return out;
}

function stale(): boolean {
  for (const src of sources()) {
    const js = join(repoRoot, 'dist', relative(repoRoot, src)).replace(/\.ts$/, '.js');
    if (!existsSync(js) || statSync(js).mtimeMs < statSync(src).mtimeMs) return true;
  }
  return false;
}

let built = false;

export function ensureDist(): void {
  if (built) return;
  if (stale()) {
    try {
      execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: repoRoot, stdio: 'pipe' });
    } catch {
      // type errors elsewhere in the repo: outputs are still written; checked below
    }
    if (stale()) throw new Error('dist/ is stale after `npx tsc -p tsconfig.json`: build the project first');
  }
  built = true;
}

/** file:// URL of a compiled module, e.g. distUrl('src/egress/consumer/pool.js'). */
export function distUrl(path: string): string {
  return pathToFileURL(join(repoRoot, 'dist', path)).href;
}
