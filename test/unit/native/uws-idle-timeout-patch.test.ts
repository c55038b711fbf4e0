// The uWS idle-timeout patch (src/native/uws.ts) on the real shipped binary: exactly the 40 immediates change, and
// anything that is not the verified binary, or not the expected instructions, is refused rather than patched.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { patchIdleTimeout, ticksFor, VERIFIED_UWS_BINARIES } from '../../../src/native/uws.js';

const target = `${process.platform}-${process.arch}-${process.versions.modules}`;
const verified = VERIFIED_UWS_BINARIES[target];
const image = (): Buffer => {
  const dir = dirname(createRequire(import.meta.url).resolve('uWebSockets.js'));
  return readFileSync(join(dir, `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`));
};

describe('uWS HTTP idle timeout patch', () => {
  it('ticks: the timeout never fires before the configured seconds (first sweep within 4 s)', () => {
    expect([ticksFor(8), ticksFor(24), ticksFor(60)]).toEqual([3, 7, 16]);
    for (const s of [8, 9, 20, 24, 60, 900]) expect((ticksFor(s) - 1) * 4).toBeGreaterThanOrEqual(s);
  });

  it.skipIf(verified === undefined)('changes exactly the 20 sites x 2 immediates of the verified binary', () => {
    const stock = image();
    const patched = patchIdleTimeout(stock, verified!, 60);
    expect(typeof patched).not.toBe('string');
    const changed = [...(patched as Uint8Array)].flatMap((b, i) => (b === stock[i] ? [] : [[i, stock[i], b]]));
    expect(changed).toHaveLength(40);
    for (const [, before, after] of changed) expect([before, after]).toEqual([3, 16]);
  });

  it.skipIf(verified === undefined)('refuses another binary, and unexpected instructions even under a matching hash', () => {
    const stock = image();
    const other = Buffer.from(stock);
    other[0x100] = (other[0x100] ?? 0) ^ 0xff;
    expect(patchIdleTimeout(other, verified!, 60)).toMatch(/sha256 .* is not the verified one/);

    const site = verified!.sites[3]!;
    const tampered = Buffer.from(stock);
    tampered[site + 0x1a + 2] = 0x04; // the second add of one site no longer adds 3
    const sha256 = createHash('sha256').update(tampered).digest('hex');
    expect(patchIdleTimeout(tampered, { sha256, sites: verified!.sites }, 60)).toBe(`unexpected bytes at 0x${(site + 0x1a).toString(16)}`);
    expect(patchIdleTimeout(stock, verified!, 4_000)).toMatch(/out of range/);
  });
});
