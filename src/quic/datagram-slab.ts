// Outgoing datagram memory (hot path: every packet). quiche writes each packet into one reused scratch buffer; we copy
// it into a slab region and hand that region to dgram.send. Why not reuse one buffer: node:dgram keeps a reference to
// the buffer until the send completes, and when the kernel queue is full (EAGAIN) libuv sends it later, so a reused
// buffer could be overwritten before it leaves. Slab regions are never reused: when a slab is full a fresh one is
// allocated and the old one is freed by GC once its pending sends are done. Cost per packet: one memcpy (~1.3 KB)
// and one Buffer view; one 256 KB allocation per ~190 packets.
const SLAB_BYTES = 256 * 1024;

export class DatagramSlab {
  /** quiche writes packets here; valid until the next send() call. */
  readonly scratch: Buffer;
  private slab: Buffer;
  private used = 0;

  constructor(private readonly maxDatagram: number) {
    this.scratch = Buffer.allocUnsafeSlow(maxDatagram);
    this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
  }

  /** Copies scratch[0, len) into a slab region that stays untouched until garbage-collected. */
  take(len: number): Buffer {
    if (this.used + len > SLAB_BYTES) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.used = 0;
    }
    const start = this.used;
    this.scratch.copy(this.slab, start, 0, len);
    // Keep regions 8-byte aligned (cheap, and keeps copies on aligned boundaries).
    this.used = (start + len + 7) & ~7;
    return this.slab.subarray(start, start + len);
  }

  get maxDatagramBytes(): number {
    return this.maxDatagram;
  }
}
