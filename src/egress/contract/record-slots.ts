// The record handler's per-slot state (egress workers and QUIC threads; HOT: indexed per record and route, allocated
// once per handler). One entry per slot (a ring slot for the consumer loop, a local slot for the QUIC ingress's local
// dispatch), typed arrays so that a record in flight costs no allocation; the (slot, route) arrays are indexed
// slot * ROUTE_COUNT + routeId. Reset per record by the handler (./send-record.ts).
import type { TxView } from './route.js';
import { ROUTE_COUNT } from '../../shm/layout.js';

export interface RecordSlots {
  /** Routes still working on the record in this slot (+1 while dispatch is running). */
  readonly pending: Int32Array;
  /** 1 once any route reported `sent` for the record in this slot. */
  readonly delivered: Uint8Array;
  /** The record's view (built when a route exists), for the retry queue's copy at release. */
  readonly views: (TxView | null)[];
  /** The record's effective route mask (its own | the key's extra routes, & this consumer's family). */
  readonly masks: Uint32Array;
  /** Outcome index + 1 per (slot, route), read only for records where some route did not send (`troubled`). */
  readonly outcomes: Uint8Array;
  /** 1 once a route answered anything but `sent` (or the benchmark's dropped:discarded) for the record. */
  readonly troubled: Uint8Array;
  /** The record's landing-receipt sequence number (0 = none). */
  readonly seqs: Uint32Array;
  /** Wall-clock ms the front received the record (the latency histogram's start). */
  readonly receivedAt: Float64Array;
  /** The record's join table entry + 1 (published into two rings), 0 = in this ring only. */
  readonly joins: Uint32Array;
}

export function newRecordSlots(slotCount: number): RecordSlots {
  return {
    pending: new Int32Array(slotCount),
    delivered: new Uint8Array(slotCount),
    views: new Array<TxView | null>(slotCount).fill(null),
    masks: new Uint32Array(slotCount),
    outcomes: new Uint8Array(slotCount * ROUTE_COUNT),
    troubled: new Uint8Array(slotCount),
    seqs: new Uint32Array(slotCount),
    receivedAt: new Float64Array(slotCount),
    joins: new Uint32Array(slotCount),
  };
}

/** A larger table holding `s`'s entries (cold: the local dispatch's table grows when more are in flight than ever). */
export function grownRecordSlots(s: RecordSlots, slotCount: number): RecordSlots {
  const g = newRecordSlots(slotCount);
  g.pending.set(s.pending);
  g.delivered.set(s.delivered);
  for (let i = 0; i < s.views.length; i++) g.views[i] = s.views[i];
  g.masks.set(s.masks);
  g.outcomes.set(s.outcomes);
  g.troubled.set(s.troubled);
  g.seqs.set(s.seqs);
  g.receivedAt.set(s.receivedAt);
  g.joins.set(s.joins);
  return g;
}
