// A TxView over a real ring slot holding `tx` (published by a RingProducer, taken by a RingConsumer), as a route
// sees a record in the egress worker.
import type { TxView } from '../../src/egress/contract/route.js';
import { createRing, RingConsumer, RingProducer } from '../../src/shm/ring.js';

export interface RingTxViewOptions {
  readonly keyId?: number;
  readonly routeMask?: number;
  readonly maxRetries?: number;
  readonly traceId?: string;
}

export function ringTxView(tx: Buffer, o: RingTxViewOptions = {}): TxView {
  const keyId = o.keyId ?? 3;
  const maxRetries = o.maxRetries ?? -1;
  const traceId = o.traceId ?? 'trace-x';
  const sab = createRing(2, 1232);
  const p = new RingProducer(sab);
  const off = p.reserve();
  tx.copy(p.bytes, off);
  p.publish(tx.length, keyId, o.routeMask ?? 1, maxRetries, performance.timeOrigin + performance.now(), traceId);
  const c = new RingConsumer(sab);
  const slot = c.take();
  return {
    bytes: c.txBytes(slot),
    sab,
    byteOffset: c.txOffset(slot),
    length: tx.length,
    signatureOffset: 1,
    keyId,
    maxRetries,
    traceId,
    receivedAtMs: c.receivedAtMs(slot),
  };
}
