// The uWS runtime pieces that need no relay: the build-time glibc-compat rewrite (src/native/elf-glibc-compat.ts) on
// the real package binaries — exactly the pinned output, a handful of symbol-table bytes changed, no code — and the
// loader's choices (src/native/uws.ts): the order of builds, the env override, the keep-alive arithmetic.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { elfHash, rebindGlibc238, sha256 } from '../../../src/native/elf-glibc-compat.js';
import { GLIBC_COMPAT_COPIES, UWS_BUILDS } from '../../../src/native/uws-builds.js';
import { NoUwsBuildError, requestedBuilds, responseTimeoutFor } from '../../../src/native/uws.js';

const require = createRequire(import.meta.url);
const maintainedDir = dirname(require.resolve('@btc-vision/uwebsockets.js'));
const legacyDir = dirname(require.resolve('uWebSockets.js'));

describe('glibc-compat rewrite of the maintained build', () => {
  it.each(Object.entries(GLIBC_COMPAT_COPIES))('%s: pinned input -> pinned output, only symbol-table bytes change', (key, pinned) => {
    const input = readFileSync(join(maintainedDir, `uws_${key.replaceAll('-', '_')}.node`));
    expect(sha256(input)).toBe(pinned.input);
    const out = rebindGlibc238(input);
    if (typeof out === 'string') throw new Error(out);
    expect(sha256(out.image)).toBe(pinned.output);
    expect(out.rebound).toEqual(['__isoc23_sscanf -> sscanf', '__isoc23_strtol -> strtol', '__isoc23_strtoul -> strtoul']);
    const changed = [...out.image].flatMap((b, i) => (b === input[i] ? [] : [i]));
    // 3 symbol name offsets (low byte, maybe a carry) + the version need's hash and name: at most 3 * 4 + 8 bytes.
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.length).toBeLessThanOrEqual(20);
    expect(sha256(input)).toBe(pinned.input); // the input buffer itself is never modified
  });

  it('refuses what it cannot rewrite: not ELF, or nothing above glibc 2.36 to rebind (the legacy build)', () => {
    expect(rebindGlibc238(Buffer.from('#!/bin/sh\n'.padEnd(64, ' ')))).toBe('not a little-endian ELF64 file');
    expect(rebindGlibc238(readFileSync(join(legacyDir, 'uws_linux_x64_115.node')))).toBe('needs no GLIBC_2.38: nothing to rewrite');
  });

  it('elfHash is the SysV hash glibc compares (known values)', () => {
    expect(elfHash('GLIBC_2.2.5').toString(16)).toBe('9691a75');
  });
});

describe('uWS loader choices', () => {
  it('tries our source build first, then the maintained build, then the legacy one; SLOTRELAY_UWS_BUILD restricts to one', () => {
    expect(UWS_BUILDS.map((b) => b.id)).toEqual(['source', 'maintained', 'legacy']);
    expect(requestedBuilds({}).map((b) => b.id)).toEqual(['source', 'maintained', 'legacy']);
    expect(requestedBuilds({ SLOTRELAY_UWS_BUILD: 'auto' }).map((b) => b.id)).toEqual(['source', 'maintained', 'legacy']);
    expect(requestedBuilds({ SLOTRELAY_UWS_BUILD: 'legacy' }).map((b) => b.id)).toEqual(['legacy']);
    expect(requestedBuilds({ SLOTRELAY_UWS_BUILD: 'source' }).map((b) => b.id)).toEqual(['source']);
    expect(() => requestedBuilds({ SLOTRELAY_UWS_BUILD: 'newest' })).toThrow(/expected auto, source, maintained or legacy/);
  });

  it('the start error names every build and its reason', () => {
    const e = new NoUwsBuildError([
      { id: 'maintained', reason: 'package @btc-vision/uwebsockets.js is not installed' },
      { id: 'legacy', reason: 'no uws_linux_x64_137.node in uWebSockets.js' },
    ]);
    expect(e.message).toMatch(/^no uWebSockets\.js build loads on Node .+: maintained: package .+ not installed; legacy: no uws_linux_x64_137/);
  });

  it('responseTimeoutFor keeps an idle connection at least N s and closes it within 4 s after (4 s sweeps)', () => {
    for (const n of [8, 9, 19, 20, 24, 60, 61, 952]) {
      const ticks = Math.floor((responseTimeoutFor(n) + 3) / 4); // what uSockets arms
      expect((ticks - 1) * 4, `N=${n}`).toBeGreaterThanOrEqual(n);
      expect(ticks * 4, `N=${n}`).toBeLessThanOrEqual(n + 8);
      expect(ticks).toBeLessThan(240);
    }
    expect(responseTimeoutFor(24)).toBe(25);
  });
});
