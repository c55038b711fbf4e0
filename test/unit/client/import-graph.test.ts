// The size check of issue #14: what a user's bundle pulls in through `slotrelay/client`. Walks the EMITTED imports
// (static, re-exports, side-effect and dynamic) from the file package.json exports "./client" names, JS and .d.ts:
// every module reached must be one of the client's own files, and no bare specifier (a dependency) may appear at
// all. The same walker run from the server's entry finds uWebSockets.js, piscina, pino and zod, so it can fail.
// The QUIC transport's entry, exports "./client/quic", may also reach the QUIC client files it shares with the relay
// (src/client/quic/ingress-client.ts, which lives with the client now, and what it imports: src/ingress/codes.ts, src/quic/, src/tx/base58.ts and its generated step, src/native/private-addon.ts),
// Node's built-ins, msgpackr and @matrixai/quic (loaded by require.resolve of its platform package), nothing else.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { ensureDistFresh } from '../telemetry/dist-fresh.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const SERVER_DEPENDENCIES = ['uWebSockets.js', 'piscina', '@matrixai/quic', 'pino', 'zod', 'msgpackr', 'undici', 'ws', 'yaml', '@solana/web3.js', '@solana/kit'];

// `import x from '...'`, `export {..} from '...'`, `import '...'`, `import('...')`, `require('...')`,
// `require.resolve('...')` (how src/native/uws.ts finds uWebSockets.js).
const SPECIFIER_RE = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire(?:\.resolve)?\s*\(\s*)(['"])([^'"]+)\1/g;

/** Code without its comments (a doc comment may quote an import); `//` after a non-space (a URL) is kept. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/[^\n]*/g, '$1');
}

interface Graph {
  readonly files: string[];
  readonly bare: Set<string>;
}

function walk(entry: string): Graph {
  const seen = new Set<string>();
  const bare = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = code(readFileSync(file, 'utf8'));
    for (const m of text.matchAll(SPECIFIER_RE)) {
      const spec = m[2];
      if (spec.startsWith('.')) {
        // Emitted ESM names its .js files; a .d.ts names the same .js, whose declarations sit beside it.
        let target = resolve(dirname(file), spec);
        if (file.endsWith('.d.ts')) target = target.replace(/\.js$/, '.d.ts');
        todo.push(target);
      } else {
        bare.add(spec);
      }
    }
  }
  return { files: [...seen].map((f) => relative(ROOT, f)).sort(), bare };
}

function exportsEntry(condition: 'default' | 'types', entry: './client' | './client/quic' = './client'): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> };
  return resolve(ROOT, pkg.exports[entry][condition]);
}

/** Files outside dist/src/client/ the QUIC entry may reach: the shared QUIC client and its imports. */
const QUIC_SHARED = /^dist\/src\/(ingress\/codes|quic\/[a-z0-9-]+|tx\/base58(-limbs\.generated)?|native\/(private-addon|project-root))\.(js|d\.ts)$/;
const QUIC_ALLOWED_PACKAGES = /^(node:[a-z_/]+|msgpackr|@matrixai\/quic(\/.*)?)$/;

beforeAll(() => {
  ensureDistFresh();
  ensureClientBuilt();
});

describe('slotrelay/client import graph', () => {
  it('package.json exports ./client names the built entry and its declarations, and both exist', () => {
    expect(relative(ROOT, exportsEntry('default'))).toBe('dist/src/client/index.js');
    expect(relative(ROOT, exportsEntry('types'))).toBe('dist/src/client/index.d.ts');
    expect(existsSync(exportsEntry('default'))).toBe(true);
    expect(existsSync(exportsEntry('types'))).toBe(true);
  });

  it('the emitted JS reaches only the client files and imports no package at all', () => {
    const g = walk(exportsEntry('default'));
    expect(g.files.length).toBeGreaterThan(5);
    expect(g.files.filter((f) => !f.startsWith('dist/src/client/'))).toEqual([]);
    expect(g.files).not.toContain('dist/src/client/example-transaction.js'); // web3.js helper for the CLI only
    expect([...g.bare]).toEqual([]);
  });

  it('the declarations reach only the client files too (no server or dependency types)', () => {
    const g = walk(exportsEntry('types'));
    expect(g.files.filter((f) => !f.startsWith('dist/src/client/'))).toEqual([]);
    expect([...g.bare]).toEqual([]);
  });

  it('the main entry does not reach the QUIC entry (quiche stays out of an HTTP user\'s bundle)', () => {
    expect(walk(exportsEntry('default')).files.filter((f) => f.includes('/quic/'))).toEqual([]);
  });

  it('package.json exports ./client/quic names its built entry and declarations, and both exist', () => {
    expect(relative(ROOT, exportsEntry('default', './client/quic'))).toBe('dist/src/client/quic/index.js');
    expect(relative(ROOT, exportsEntry('types', './client/quic'))).toBe('dist/src/client/quic/index.d.ts');
    expect(existsSync(exportsEntry('default', './client/quic'))).toBe(true);
    expect(existsSync(exportsEntry('types', './client/quic'))).toBe(true);
  });

  it('the QUIC entry reaches the client, the shared QUIC client files, msgpackr and quiche only (no uWS, piscina, pino, zod, localnet)', () => {
    const g = walk(exportsEntry('default', './client/quic'));
    expect(g.files.filter((f) => !f.startsWith('dist/src/client/') && !QUIC_SHARED.test(f))).toEqual([]);
    expect([...g.bare].filter((b) => !QUIC_ALLOWED_PACKAGES.test(b))).toEqual([]);
    // It does load quiche and msgpackr (so the allowance above is used, and the walk is not vacuous).
    expect(g.files).toContain('dist/src/quic/quiche.js');
    expect(g.files).toContain('dist/src/client/quic/ingress-client.js');
    expect(g.bare.has('msgpackr')).toBe(true);
    expect(g.files.some((f) => /localnet|\/front\/|\/config\/|\/egress\//.test(f))).toBe(false);
    const d = walk(exportsEntry('types', './client/quic'));
    expect(d.files.filter((f) => !f.startsWith('dist/src/client/') && !QUIC_SHARED.test(f))).toEqual([]);
    expect([...d.bare].filter((b) => !QUIC_ALLOWED_PACKAGES.test(b))).toEqual([]);
  });

  it('control: the same walker from the server entry finds the server dependencies', () => {
    const g = walk(join(ROOT, 'dist/src/main.js'));
    for (const dep of ['uWebSockets.js', 'piscina', 'pino', 'zod']) expect([...g.bare].some((b) => b === dep || b.startsWith(dep + '/'))).toBe(true);
    expect(SERVER_DEPENDENCIES.filter((d) => g.bare.has(d)).length).toBeGreaterThanOrEqual(4);
  });
});
