// Base58 for identities, cold (once per connection). A thin adapter over src/tx/base58.ts, the one base58
// implementation in the project, so the QUIC code keeps its simple (bytes) -> string / string -> bytes API.
import { decodeBase58Into, encodePubkeyBase58, encodeSignatureBase58 } from '../tx/base58.js';

export function base58Encode(bytes: Uint8Array): string {
  if (bytes.length === 32) return encodePubkeyBase58(bytes, 0);
  if (bytes.length === 64) return encodeSignatureBase58(bytes, 0);
  throw new RangeError(`base58Encode: expected 32 or 64 bytes, got ${bytes.length}`);
}

/** Decodes base58; throws on a character outside the alphabet. */
export function base58Decode(text: string): Uint8Array {
  const out = new Uint8Array(text.length); // a base58 string never decodes to more bytes than it has characters
  const n = decodeBase58Into(out, text, out.length);
  return out.slice(0, n);
}
