// The accept path's long-header reader (src/quic/long-header.ts) against quiche's own Header.fromSlice: on long headers
// of every type and version, with and without tokens, truncated, and on random bytes, both agree on what they read
// (type of a v1 packet, version, connection ids, the Initial's token); malformed ones are refused.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LONG_TYPE_INITIAL, newLongHeader, readLongHeader } from '../../../src/quic/long-header.js';
import { quiche } from '../../../src/quic/quiche.js';
import { junkInitial } from '../../../bench/ingress/junk-initial.js';

function varint(n: number): number[] {
  if (n < 64) return [n];
  if (n < 16384) return [0x40 | (n >> 8), n & 0xff];
  return [0x80 | (n >>> 24), (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
}

const longHeader = fc
  .record({
    type: fc.integer({ min: 0, max: 3 }),
    version: fc.constantFrom(1, 0x6b3343cf, 0xff00001d, 0x1a2a3a4a),
    dcid: fc.uint8Array({ minLength: 0, maxLength: 20 }),
    scid: fc.uint8Array({ minLength: 0, maxLength: 20 }),
    token: fc.uint8Array({ minLength: 0, maxLength: 80 }),
    rest: fc.uint8Array({ minLength: 0, maxLength: 64 }),
    cut: fc.nat(200),
  })
  .map(({ type, version, dcid, scid, token, rest, cut }) => {
    const b = [0xc0 | (type << 4), version >>> 24, (version >> 16) & 0xff, (version >> 8) & 0xff, version & 0xff, dcid.length, ...dcid, scid.length, ...scid];
    if (type === 0) b.push(...varint(token.length), ...token);
    b.push(...varint(rest.length + 4), 0, 0, 0, 0, ...rest);
    return Buffer.from(b.slice(0, Math.max(1, b.length - (cut > 150 ? cut - 150 : 0))));
  });

function viaQuiche(msg: Buffer): { type: number; version: number; dcid: string; scid: string; token: string } | null {
  try {
    const h = quiche.Header.fromSlice(msg, 16);
    return { type: h.ty, version: h.version, dcid: Buffer.from(h.dcid).toString('hex'), scid: Buffer.from(h.scid).toString('hex'), token: Buffer.from(h.token ?? []).toString('hex') };
  } catch {
    return null;
  }
}

describe('readLongHeader', () => {
  it('reads what quiche reads from long headers', () => {
    const out = newLongHeader();
    let compared = 0;
    fc.assert(
      fc.property(longHeader, (msg) => {
        const q = viaQuiche(msg);
        const ok = readLongHeader(msg, out);
        // Where quiche refuses (a truncated header), ours may still read the prefix it needs; where quiche reads, so must ours.
        if (q === null) return;
        compared++;
        expect(ok).toBe(true);
        expect(out.version).toBe(q.version);
        expect(out.dcid.toString('hex')).toBe(q.dcid);
        expect(out.scid.toString('hex')).toBe(q.scid);
        if (q.version === 1) {
          expect(out.type === LONG_TYPE_INITIAL).toBe(q.type === quiche.Type.Initial);
          if (out.type === LONG_TYPE_INITIAL) expect(out.token.toString('hex')).toBe(q.token);
        }
      }),
      { numRuns: 2_000 },
    );
    expect(compared).toBeGreaterThan(1_000); // most generated headers are whole: the comparison is not vacuous
  });

  it('the junk Initials of the flood bench: read as tokenless v1 Initials with 8-byte ids', () => {
    const out = newLongHeader();
    for (let i = 0; i < 200; i++) {
      const j = junkInitial();
      expect(readLongHeader(j, out)).toBe(true);
      expect([out.type, out.version, out.dcid.length, out.scid.length, out.token.length]).toEqual([LONG_TYPE_INITIAL, 1, 8, 8, 0]);
    }
  });

  it('refuses short headers, ids over 20 bytes and lengths past the end', () => {
    const out = newLongHeader();
    expect(readLongHeader(Buffer.from([0x40, 1, 2, 3, 4, 5, 6, 7, 8]), out)).toBe(false);
    expect(readLongHeader(Buffer.from([0xc0, 0, 0, 0, 1, 21, ...new Array<number>(30).fill(0)]), out)).toBe(false);
    expect(readLongHeader(Buffer.from([0xc0, 0, 0, 0, 1, 8, 1, 2, 3]), out)).toBe(false);
    expect(readLongHeader(Buffer.from([0xc0, 0, 0, 0, 1, 0, 0, 0x44, 0x00]), out)).toBe(false); // token of 1,024 bytes, none there
  });
});
