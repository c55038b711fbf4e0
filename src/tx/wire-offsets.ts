// Where a transaction's first signature and recent blockhash sit, read from bytes the front already parsed and
// accepted (egress worker and QUIC thread; HOT: once per record or retry admission, no allocation). The egress side
// has only the bytes, not the front's ParsedTransaction, so the two layouts are told apart here again:
//   legacy/v0: compact-u16 signature count, the signatures, [version byte], header (3), compact-u16 key count, keys,
//              blockhash;
//   v1 (first byte 0x81): message first with the blockhash at a fixed offset (8), signatures at the end, as many as
//              the header's byte 1 says (src/tx/parse-v1-transaction.ts).
// -1 where the bytes are too short to hold the field (never for a transaction the front accepted).
import { V1_BLOCKHASH_OFFSET, V1_VERSION_BYTE } from './parse-v1-transaction.js';

/** Legacy/v0: the signature count and the offset just after it (compact-u16, 1-3 bytes); null when cut short. */
function legacySignatureCount(bytes: Uint8Array, offset: number, end: number): [number, number] | null {
  let p = offset;
  let count = 0;
  for (let shift = 0; shift < 21; shift += 7) {
    if (p >= end) return null;
    const b = bytes[p++];
    count |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
  }
  return [count, p];
}

function isV1(bytes: Uint8Array, offset: number, length: number): boolean {
  return length > 1 && bytes[offset] === V1_VERSION_BYTE;
}

/** Offset of the first signature relative to `offset`, or -1. */
export function firstSignatureOffset(bytes: Uint8Array, offset: number, length: number): number {
  if (isV1(bytes, offset, length)) {
    const at = length - bytes[offset + 1] * 64;
    return bytes[offset + 1] > 0 && at >= V1_BLOCKHASH_OFFSET + 32 ? at : -1;
  }
  const c = legacySignatureCount(bytes, offset, offset + length);
  return c === null || c[0] === 0 || c[1] + 64 > offset + length ? -1 : c[1] - offset;
}

/** Offsets (relative to `offset`) of the first signature and of the recent blockhash; -1 for one not present. */
export function signatureAndBlockhashOffsets(bytes: Uint8Array, offset: number, length: number): [number, number] {
  const sigOff = firstSignatureOffset(bytes, offset, length);
  if (isV1(bytes, offset, length)) return [sigOff, length >= V1_BLOCKHASH_OFFSET + 32 ? V1_BLOCKHASH_OFFSET : -1];
  if (sigOff < 0) return [-1, -1];
  const end = offset + length;
  const c = legacySignatureCount(bytes, offset, end)!;
  let p = c[1] + c[0] * 64;
  if (p >= end) return [sigOff, -1];
  if ((bytes[p] & 0x80) !== 0) p++; // versioned message prefix
  p += 3; // header
  let keys = 0;
  for (let shift = 0; shift < 21; shift += 7) {
    if (p >= end) return [sigOff, -1];
    const b = bytes[p++];
    keys |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
  }
  p += keys * 32;
  if (p + 32 > end) return [sigOff, -1];
  return [sigOff, p - offset];
}
