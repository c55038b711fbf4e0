// The QUIC long header's invariant fields read in place (QUIC thread; HOT under a flood of Initials, cold otherwise).
// RFC 8999 §5.1 / RFC 9000 §17.2: first byte (form bit 0x80, fixed bit, type bits 0x30), version (4), destination
// connection id (length byte, <= 20 bytes), source connection id (same), then for a v1 Initial the token (varint
// length, bytes). The accept path used quiche's Header.fromSlice for this, which hands back a native object and three
// buffers whose memory is released only by finalizers after a GC and a later loop turn: at 5,000 junk Initials/s that
// kept ~90 MB of the quic-egress thread's native memory in use (bench/ingress/initial-flood.bench.ts). Here: subarray views
// of the datagram and numbers, nothing native, nothing copied.

/** QUIC v1's Initial long-packet type (the type bits 0x30 of the first byte). */
export const LONG_TYPE_INITIAL = 0;
const MAX_CID_LEN = 20;

export interface LongHeader {
  /** Long-packet type bits ((first byte & 0x30) >> 4): 0 Initial, 1 0-RTT, 2 Handshake, 3 Retry (in QUIC v1). */
  type: number;
  version: number;
  dcid: Buffer;
  scid: Buffer;
  /** The Initial's token (empty when none; also empty for other types). */
  token: Buffer;
}

/** A reusable result: one per thread, overwritten by each parse (the accept path is synchronous). */
export function newLongHeader(): LongHeader {
  const empty = Buffer.alloc(0);
  return { type: 0, version: 0, dcid: empty, scid: empty, token: empty };
}

/**
 * Reads msg's long header into `out`; false when msg is not a well-formed long header (a short header, or lengths
 * past the end). The views in `out` alias msg.
 */
export function readLongHeader(msg: Buffer, out: LongHeader): boolean {
  const n = msg.length;
  if (n < 7 || (msg[0] & 0x80) === 0) return false;
  out.type = (msg[0] & 0x30) >> 4;
  out.version = msg.readUInt32BE(1);
  let p = 5;
  const dl = msg[p++];
  if (dl > MAX_CID_LEN || p + dl + 1 > n) return false;
  out.dcid = msg.subarray(p, p + dl);
  p += dl;
  const sl = msg[p++];
  if (sl > MAX_CID_LEN || p + sl > n) return false;
  out.scid = msg.subarray(p, p + sl);
  p += sl;
  out.token = msg.subarray(p, p);
  if (out.version !== 1 || out.type !== LONG_TYPE_INITIAL) return true;
  // Token length: a variable-length integer (RFC 9000 §16), its length in the two top bits of its first byte.
  if (p >= n) return false;
  const lenBytes = 1 << (msg[p] >> 6);
  if (p + lenBytes > n) return false;
  let len = msg[p] & 0x3f;
  for (let i = 1; i < lenBytes; i++) len = len * 256 + msg[p + i];
  p += lenBytes;
  if (p + len > n) return false;
  out.token = msg.subarray(p, p + len);
  return true;
}
