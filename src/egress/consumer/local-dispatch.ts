// A transaction the QUIC ingress admitted in the QUIC thread (src/ingress/local-admission.ts), dispatched without the
// ring (QUIC thread; HOT: one call per locally admitted transaction): a set-up of the record handler
// (src/egress/contract/send-record.ts) over local slots, with the consumer loop's routes and observers, so a local
// transaction gets the same routes, outcome counters, receipt writes, latency, rebroadcast admission and accounting
// lines as a ring record. `done` is called once every route answered (the bytes may be reused then). Counted
// consumed/released like a record. A crash (the loop detached) leaves it in its slab slot for the next loop's replay.
import type { LocalDispatch } from '../../ingress/local-admission.js';
import { firstSignatureOffset } from '../../tx/wire-offsets.js';
import type { EgressRoute, TxView } from '../contract/route.js';
import { SendRecord, type RecordObservers } from '../contract/send-record.js';

/** Local slots at start; the table doubles when more are in flight (bounded by the slab's slots upstream). */
const INITIAL_SLOTS = 64;

/** The consumer loop's parts a local dispatch shares. */
export interface LocalDispatchParts {
  /** The route bits this consumer handles. */
  readonly ownMask: number;
  readonly routes: readonly (EgressRoute | null | undefined)[];
  readonly observers: RecordObservers;
  /** Before each dispatch (the test hook that crashes the thread after N local sends). */
  readonly beforeEach: () => void;
}

/** The local dispatch and its handler (the loop sets the handler's closed / detached flags with its own). */
export function localDispatcher(c: LocalDispatchParts): { readonly dispatch: LocalDispatch; readonly record: SendRecord } {
  /** Free local slots (a stack), and each busy slot's `done`. */
  const free: number[] = [];
  const dones: ((() => void) | null)[] = [];
  const record: SendRecord = new SendRecord({
    slots: INITIAL_SLOTS,
    routes: c.routes,
    observers: c.observers,
    // The view is set before dispatch (setView); its ids serve the accounting line, read before the slot is freed.
    ids: { traceId: (slot) => views[slot]?.traceId ?? '', keyId: (slot) => views[slot]?.keyId ?? -1 },
    viewOf: (slot) => views[slot]!,
    release: (slot) => {
      const done = dones[slot];
      dones[slot] = null;
      views[slot] = null;
      free.push(slot);
      done?.();
    },
  });
  const views: (TxView | null)[] = [];
  const more = (): void => {
    const from = dones.length;
    const to = from === 0 ? INITIAL_SLOTS : from * 2;
    record.grow(to);
    for (let i = from; i < to; i++) {
      dones.push(null);
      views.push(null);
    }
    for (let i = to - 1; i >= from; i--) free.push(i);
  };
  const dispatch: LocalDispatch = (sab, byteOffset, length, keyId, routeMask, receivedAtMs, traceId, seq, done) => {
    c.beforeEach();
    if (free.length === 0) more();
    const slot = free.pop()!;
    record.took(slot, 0);
    const bytes = Buffer.from(sab, byteOffset, length);
    const view: TxView = { bytes, sab, byteOffset, length, signatureOffset: firstSignatureOffset(bytes, 0, length), keyId, maxRetries: -1, traceId, receivedAtMs, receiptSeq: seq };
    views[slot] = view;
    dones[slot] = done;
    record.setView(slot, view);
    record.dispatch(slot, routeMask & c.ownMask, seq, receivedAtMs);
  };
  return { dispatch, record };
}
