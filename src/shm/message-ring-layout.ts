// Shared-memory layout of a message ring (./message-ring.ts), the one SPSC ring of variable messages between two
// threads with event loops (cold constants, read on every push/pop as plain numbers). Two protocols ride on it, each
// naming the header's six protocol words in its own layout: the QUIC ingress (./ingress-layout.ts: QUIC thread <->
// front) and the links between QUIC threads (./quic-link-layout.ts).
//
// Message ring = one SharedArrayBuffer:
//   bytes 0..255   control words (Int32Array `ctl`), each hot word on its own 64-byte line
//     ctl[0] MAGIC, ctl[1] VERSION, ctl[2] slot count (power of two), ctl[3] slot size in bytes
//     ctl[16] HEAD     messages published by the producer (free-running u32)
//     ctl[32] TAIL     messages released by the consumer
//     ctl[48] WAITING  1 while the consumer sleeps in Atomics.waitAsync on HEAD
//     ctl[50] STOP     1 = the consumer should return (shutdown)
//   bytes 256..    slot i at 256 + i * slotBytes: a 40-byte header, then the payload
//     header: kind u32 @0, payload length u32 @4, then the protocol words:
//       i0 i32 @8, u0 u32 @12, f0 f64 @16, f1 f64 @24, u1 u32 @32, u2 u32 @36

export const MSG_RING_MAGIC = 0x51494e47; // 'QING' (born as the QUIC ingress's ring)
export const MSG_RING_VERSION = 1;

export const MCTL_BYTES = 256;
export const MCTL_MAGIC = 0;
export const MCTL_VERSION = 1;
export const MCTL_SLOT_COUNT = 2;
export const MCTL_SLOT_BYTES = 3;
export const MCTL_HEAD = 16;
export const MCTL_TAIL = 32;
export const MCTL_WAITING = 48;
export const MCTL_STOP = 50;

// Message header, byte offsets inside a slot.
export const MSG_KIND = 0; // u32: the protocol's message kind
export const MSG_LENGTH = 4; // u32: payload bytes
// The protocol words: what each means is the protocol's (its layout names them).
export const MSG_I0 = 8; // i32
export const MSG_U0 = 12; // u32
export const MSG_F0 = 16; // f64
export const MSG_F1 = 24; // f64
export const MSG_U1 = 32; // u32
export const MSG_U2 = 36; // u32
export const MSG_HEADER_BYTES = 40;

export function msgSlotBytes(maxPayloadBytes: number): number {
  return Math.ceil((MSG_HEADER_BYTES + maxPayloadBytes) / 64) * 64;
}

export function msgRingByteLength(slotCount: number, slotBytes: number): number {
  return MCTL_BYTES + slotCount * slotBytes;
}

