// Our uWS build step (scripts/uws-build.ts) as `make build` runs it, without compiling: every patch of
// vendor/uws-patches applies to the vendored tree; on a host without a compiler the step says so, exits 0 and writes
// nothing (the prebuilt builds stay in use); and the binary `make build` made for this Node is what its manifest says.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { locateSourceBuild, VENDORED_UPSTREAM } from '../../../src/native/uws-source-build.js';

function buildStep(args: string[], env: NodeJS.ProcessEnv): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, ['dist/scripts/uws-build.js', ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('uws-build step', () => {
  it('every patch applies to the vendored sources, in order', () => {
    const cache = mkdtempSync(join(tmpdir(), 'slotrelay-uws-cache-'));
    try {
      const r = buildStep(['--check-patches'], { SLOTRELAY_UWS_CACHE: cache });
      const patches = readdirSync('vendor/uws-patches').filter((f) => f.endsWith('.patch'));
      expect(patches.length).toBe(10);
      expect(r.out).toContain(`all ${patches.length} patches apply`);
      expect(r.status).toBe(0);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('without a C++ compiler: says so, exits 0, builds nothing (the prebuilt builds stay in use)', () => {
    const cache = mkdtempSync(join(tmpdir(), 'slotrelay-uws-cache-'));
    try {
      const r = buildStep([], { SLOTRELAY_UWS_CACHE: cache, CC: '/nonexistent/gcc', CXX: '/nonexistent/g++' });
      expect(r.out).toMatch(/no C\/C\+\+ compiler \(\/nonexistent\/gcc, \/nonexistent\/g\+\+\): not built; the prebuilt uWS builds stay in use/);
      expect(r.status).toBe(0);
      expect(readdirSync(cache)).toEqual([]);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('the binary make build made for this Node matches its manifest: the vendored commits, the patches, this ABI', () => {
    const found = locateSourceBuild();
    if ('reason' in found) {
      // A host without a compiler: nothing to check but the reason the loader reports.
      expect(found.reason).toMatch(/not built for Node ABI|sha256/);
      return;
    }
    expect(found.manifest.nodeAbi).toBe(process.versions.modules);
    expect(found.manifest.upstream).toEqual({ uWebSocketsJs: VENDORED_UPSTREAM.uWebSocketsJs, uWebSockets: VENDORED_UPSTREAM.uWebSockets, uSockets: VENDORED_UPSTREAM.uSockets });
    expect(found.manifest.patches).toEqual(readdirSync('vendor/uws-patches').filter((f) => f.endsWith('.patch')).sort());
    // VENDORED.md names the same commits.
    const vendored = readFileSync('vendor/uWebSockets.js/VENDORED.md', 'utf8');
    for (const c of [VENDORED_UPSTREAM.uWebSocketsJs, VENDORED_UPSTREAM.uWebSockets, VENDORED_UPSTREAM.uSockets]) expect(vendored).toContain(c);
    expect(existsSync(found.path)).toBe(true);
  });
});
