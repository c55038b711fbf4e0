// The layering of src/ (issue #25): the rules of .dependency-cruiser.cjs, checked by dependency-cruiser on the real
// tree (every folder in its layer, no upward import, no import cycle between folders, no entry point imported from
// inside a layer, no dev dependency imported for its values by what runs in production), and on a fixture tree that breaks each rule once, so the check is shown to fail. A failure lists
// each offending import as "rule: from -> to"; docs/architecture.md says where a new folder or import belongs.
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const CLI = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');

interface Violation {
  readonly from: string;
  readonly to: string;
  readonly rule: { readonly name: string };
}

async function violations(cwd: string, paths: readonly string[]): Promise<string[]> {
  // The CLI exits non-zero when it finds violations; the JSON on stdout is what is read either way.
  const run = promisify(execFile);
  const { stdout } = await run(process.execPath, [CLI, ...paths, '--config', CONFIG, '--output-type', 'json'], {
    cwd,
    maxBuffer: 256 * 1024 * 1024,
  }).catch((err: { stdout?: string; stderr?: string }) => {
    if (typeof err.stdout === 'string' && err.stdout.startsWith('{')) return { stdout: err.stdout };
    throw new Error(`dependency-cruiser failed: ${err.stderr ?? String(err)}`);
  });
  const result = JSON.parse(stdout) as { summary: { violations: Violation[] } };
  return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
}

describe('the layers of src/ (.dependency-cruiser.cjs, docs/architecture.md)', () => {
  it('hold on the source tree: no upward import, no folder cycle, every folder placed, no dev dependency at run time', async () => {
    expect(await violations(ROOT, ['src', 'workers'])).toEqual([]);
  }, 120_000);

  it('are broken by each kind of mistake in the fixture tree', async () => {
    expect(await violations(join(ROOT, 'test/fixtures/layering'), ['src'])).toEqual([
      // A value import of a devDependency (fast-check); the type-only import of another (tinybench) is not one.
      'dev-dependency-at-run-time: src/log/dev-dep.ts -> ../../../node_modules/fast-check/lib/cjs/fast-check.js',
      'entry-point-imported: src/log/l.ts -> src/main.ts',
      'folder-cycle: src/shm/s.ts -> src/tx/t.ts',
      'unlisted-folder: src/widgets/w.ts -> src/front/b.ts',
      'upward-from-config: src/config/a.ts -> src/front/b.ts',
      'upward-from-shm: src/shm/s.ts -> src/tx/t.ts',
    ]);
  }, 120_000);
});
