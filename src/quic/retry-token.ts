// Stateless retry tokens for the QUIC server (cold: one per new connection when retry is enabled). Like quiche's
// example server, the token carries the original destination connection id; unlike it, the token is authenticated
// (HMAC-SHA256 with a per-process key, bound to the client address) and expires, so it cannot be forged or replayed.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const TOKEN_TTL_MS = 10_000;
const MAC_BYTES = 16;

export class RetryTokens {
  private readonly key = randomBytes(32);

  mint(odcid: Uint8Array, address: string, port: number, nowMs = Date.now()): Uint8Array {
    const head = Buffer.allocUnsafe(9 + odcid.length);
    head.writeDoubleBE(nowMs, 0);
    head[8] = odcid.length;
    head.set(odcid, 9);
    return Buffer.concat([head, this.mac(head, address, port)]);
  }

  /** The original destination connection id, or null when the token is forged, expired or for another address. */
  validate(token: Uint8Array, address: string, port: number, nowMs = Date.now()): Uint8Array | null {
    if (token.length < 9 + MAC_BYTES) return null;
    const t = Buffer.from(token.buffer, token.byteOffset, token.length);
    const len = t[8];
    if (t.length !== 9 + len + MAC_BYTES) return null;
    const head = t.subarray(0, 9 + len);
    if (!timingSafeEqual(this.mac(head, address, port), t.subarray(9 + len))) return null;
    const minted = t.readDoubleBE(0);
    if (!(nowMs - minted <= TOKEN_TTL_MS && minted - nowMs <= 1_000)) return null;
    return new Uint8Array(t.subarray(9, 9 + len));
  }

  private mac(head: Buffer, address: string, port: number): Buffer {
    return createHmac('sha256', this.key).update(head).update(`${address}|${port}`).digest().subarray(0, MAC_BYTES);
  }
}
