// The consumer loop's per-slot state (egress workers and QUIC threads; HOT: indexed by ring slot per record and route,
// allocated once per consumer). One entry per ring slot, typed arrays so that a record in flight costs no allocation;
// the (slot, route) arrays are indexed slot * ROUTE_COUNT + routeId. Reset per record by the loop (./consumer-loop.ts).
import type { TxView } from '../contract/route.js';
import { ROUTE_COUNT } from '../../shm/layout.js';

export interface RecordSlots {
  /** Routes still working on the record in this slot (+1 while dispatch is running). */
  readonly pending: Int32Array;
  /** 1 once any route reported `sent` for the record in this slot. */
  readonly delivered: Uint8Array;
  /** The record's view (built when a route exists), for the retry queue's copy at release. */
  readonly views: (TxView | null)[];
  /** The record's effective route mask (its own | the key's extra routes). */
  readonly masks: Uint32Array;
  /** Outcome index + 1 per (slot, route), read only for records where some route did not send (`troubled`). */
  readonly outcomes: Uint8Array;
  /** 1 once a route answered anything but `sent` (or the benchmark's dropped:discarded) for the record. */
  readonly troubled: Uint8Array;
  /** The record's landing-receipt sequence number (0 = none) and, per (slot, route), what the route aimed at. */
  readonly seqs: Uint32Array;
  readonly routeTargets: Uint16Array;
  readonly routeTargetSlots: Float64Array;
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
    routeTargets: new Uint16Array(slotCount * ROUTE_COUNT),
    routeTargetSlots: new Float64Array(slotCount * ROUTE_COUNT),
    joins: new Uint32Array(slotCount),
  };
}
