// Build step (cold; `make build` runs it after tsc): compiles native/malloc-trim/malloc_trim.c, a Node-API addon with
// glibc's malloc_trim(0), into dist/native/malloc-trim/malloc_trim.node (src/native/malloc-trim.ts loads it; the QUIC
// thread calls it once a burst of abuse has passed: docs/quic-ingress.md "Memory after abuse"). It needs a C compiler
// and glibc's headers only (not Node's: the file declares the three Node-API calls it uses). Without a compiler, or on
// a libc without malloc_trim (musl), it says so and exits 0: the relay then runs without the trim and says so at start.
// Env: CC (default gcc). Argument: --out FILE writes the addon elsewhere (tests).
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../src/native/project-root.js';
import { MALLOC_TRIM_ADDON } from '../src/native/malloc-trim.js';

const root = projectRoot();
const source = join(root, 'native', 'malloc-trim', 'malloc_trim.c');
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const out = values.out !== undefined ? resolve(values.out) : join(root, MALLOC_TRIM_ADDON);
const cc = process.env.CC !== undefined && process.env.CC !== '' ? process.env.CC : 'gcc';

const t0 = performance.now();
mkdirSync(join(out, '..'), { recursive: true });
const r = spawnSync(cc, ['-O2', '-fPIC', '-shared', '-Wall', '-Wextra', '-o', out, source], { encoding: 'utf8' });
if (r.error !== undefined || r.status !== 0) {
  rmSync(out, { force: true });
  const why = r.error !== undefined ? `${cc} not found` : (r.stderr.trim().split('\n').find((l) => l.includes('error')) ?? r.stderr.trim());
  console.log(`malloc-trim-build: not built (${why}): the relay runs without giving freed malloc pages back after abuse`);
} else {
  console.log(`malloc-trim-build: ${relative(root, out)} in ${((performance.now() - t0) / 1000).toFixed(2)} s`);
}
