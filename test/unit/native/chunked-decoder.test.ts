// The chunked-body decoder of our uWS build (vendor/uws-patches/0006 applied to the vendored ChunkedEncoding.h),
// compiled with the host's g++ (AddressSanitizer + UBSan) into chunked-decoder.cpp's checks and run: each input whole,
// cut at every byte and one byte per read, as uWS's HttpParser feeds it; 20,000 random bodies with extensions and
// trailers; 20,000 one-byte mutations. The same checks against upstream's decoder (the vendored file unpatched) show
// what the patch changes. The relay-level view (raw sockets, every build) is test/integration/relay/http-chunked.test.ts.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const CXX = process.env.CXX ?? 'g++';
const tools = [CXX, 'patch'].filter((t) => spawnSync(t, ['--version']).status !== 0);
const SKIP = tools.length > 0 ? `no ${tools.join(', ')} on this host (where make build cannot make our uWS build either)` : '';
const SRC = 'vendor/uWebSockets.js/uWebSockets/src';
const HARNESS = 'test/unit/native/chunked-decoder.cpp';

/** Compiles the harness against the ChunkedEncoding.h in `include` and runs it; its report lines. */
function compileAndRun(include: string, out: string, args: string[], sanitize: boolean): { status: number | null; lines: string[]; compileError: string } {
  const flags = ['-std=c++20', '-O1', ...(sanitize ? ['-fsanitize=address,undefined', '-fno-sanitize-recover=all'] : []), '-w'];
  const c = spawnSync(CXX, [...flags, '-I', include, HARNESS, '-o', out], { encoding: 'utf8', timeout: 120_000 });
  if (c.status !== 0) return { status: c.status, lines: [], compileError: `${c.stderr}`.slice(0, 2_000) };
  const r = spawnSync(out, args, { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, lines: r.stdout.split('\n').filter((l) => l !== ''), compileError: `${r.stderr}`.slice(0, 2_000) };
}

describe.skipIf(SKIP !== '')(`chunked decoder of our uWS build (patch 0006)${SKIP === '' ? '' : ` — skipped: ${SKIP}`}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-chunked-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every check passes on every split, 20,000 random bodies decode exactly, mutations neither crash nor hang (ASan/UBSan)', () => {
    mkdirSync(join(dir, 'uWebSockets', 'src'), { recursive: true });
    for (const f of ['ChunkedEncoding.h', 'MoveOnlyFunction.h']) cpSync(join(SRC, f), join(dir, 'uWebSockets', 'src', f));
    const p = spawnSync('patch', ['-p1', '--batch', '--quiet', '-i', join(process.cwd(), 'vendor/uws-patches/0006-chunked-trailers-and-extensions.patch')], { cwd: dir, encoding: 'utf8' });
    expect(p.status, p.stdout + p.stderr).toBe(0);
    const r = compileAndRun(join(dir, 'uWebSockets', 'src'), join(dir, 'patched'), ['random'], true);
    expect(r.compileError, 'compile / sanitizer output').toBe('');
    expect(r.lines.filter((l) => !l.startsWith('ok ')), r.lines.join('\n')).toEqual([]);
    expect(r.lines.length, "56 checks and the random run").toBe(57);
    expect(r.status).toBe(0);
  }, 180_000);

  it("upstream's decoder (unpatched) fails the checks the patch is for: extensions, trailers, strict framing", () => {
    const r = compileAndRun(SRC, join(dir, 'upstream'), [], false);
    const failed = r.lines.filter((l) => l.startsWith('FAIL ')).map((l) => l.slice(5, l.indexOf(':', 5)));
    for (const name of [
      'extension name=value',
      'quoted-string values with quoted-pairs',
      'a trailer section, then the next request',
      "an extension without ';'",
      'a bare LF ending a line with an extension',
      'g is not a hex digit',
      'chunk data followed by two other bytes',
      'a trailer field without a colon',
    ]) expect(failed, name).toContain(name);
    expect(r.status).toBe(1);
  }, 180_000);
});
