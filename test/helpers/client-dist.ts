// The client library is tested as users get it: through package.json exports "./client", i.e. the emitted
// dist/src/client/*.js and *.d.ts. Rebuilds both (tsconfig.json, then tsconfig.client.json for the declarations) when
// a client source is newer than its output, so a test never runs an old build of the code it is about.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SRC = join(ROOT, 'src/client');

function stale(): boolean {
  for (const f of readdirSync(SRC, { recursive: true, encoding: 'utf8' })) {
    if (!f.endsWith('.ts')) continue;
    const src = statSync(join(SRC, f)).mtimeMs;
    const js = join(ROOT, 'dist/src/client', f.replace(/\.ts$/, '.js'));
    if (!existsSync(js) || statSync(js).mtimeMs < src) return true;
    const dts = js.replace(/\.js$/, '.d.ts');
    // Only what the entry reaches has declarations (the CLI commands and example-transaction.ts do not).
    if (existsSync(dts) && statSync(dts).mtimeMs < src) return true;
  }
  return !existsSync(join(ROOT, 'dist/src/client/index.d.ts'));
}

let checked = false;
export function ensureClientBuilt(): void {
  if (checked) return;
  if (stale()) {
    for (const project of ['tsconfig.json', 'tsconfig.client.json']) {
      try {
        execFileSync('npx', ['tsc', '-p', project], { cwd: ROOT, stdio: 'pipe' });
      } catch {
        /* type errors elsewhere still emit; checked below */
      }
    }
    if (stale()) throw new Error('dist/src/client is stale after the build: run `npm run build`');
  }
  checked = true;
}
