// Module headers and comments name other files (what implements a contract, where a layout lives, which doc explains
// a choice); a move that forgets them leaves a reader chasing a file that is gone (issue #25 found six such headers).
// Every repository path named in a comment of src/ or workers/ must exist: `src/...`, `docs/...`, `bench/...` etc. from
// the repository root, `./x.ts` and `../x/y.ts` from the file itself. A `.js` name may stand for its `.ts` source.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const ROOTED = /(?<![A-Za-z0-9_./-])((?:src|workers|bench|scripts|test|docs|deploy|config)\/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.(?:ts|md|js|json|yml|yaml|sh|cjs|service|html))(?![A-Za-z0-9_])/g;
const RELATIVE = /(?<![A-Za-z0-9_/-])(\.\.?\/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.ts)(?![A-Za-z0-9_])/g;

function exists(abs: string): boolean {
  return existsSync(abs) || (abs.endsWith('.js') && existsSync(abs.slice(0, -3) + '.ts'));
}

/** The comment part of each line: `//` to the end (not inside a string), or a line of a block comment. */
function commentOf(line: string): string | null {
  const t = line.trimStart();
  if (t.startsWith('*') || t.startsWith('/*')) return t;
  const i = line.search(/(^|[^:'"`])\/\//);
  return i < 0 ? null : line.slice(i);
}

/** Every .ts file below `dir` (repository-relative); Node 20 has no fs.globSync. */
function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.generated.ts'))
    .map((f) => join(dir, f));
}

function missingPaths(): string[] {
  const files = [...tsFiles('src'), ...tsFiles('workers')];
  const missing: string[] = [];
  for (const f of files) {
    const lines = readFileSync(join(ROOT, f), 'utf8').split('\n');
    lines.forEach((line, i) => {
      const c = commentOf(line);
      if (c === null) return;
      for (const m of c.matchAll(ROOTED)) if (!exists(join(ROOT, m[1]))) missing.push(`${f}:${i + 1} ${m[1]}`);
      for (const m of c.matchAll(RELATIVE)) {
        const abs = resolve(ROOT, dirname(f), m[1]);
        if (!exists(abs)) missing.push(`${f}:${i + 1} ${m[1]} (${relative(ROOT, abs)})`);
      }
    });
  }
  return missing;
}

describe('paths named in comments', () => {
  it('every file a comment of src/ or workers/ names exists', () => {
    expect(missingPaths()).toEqual([]);
  });
});
