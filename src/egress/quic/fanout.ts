// Fanout (QUIC thread, HOT: once per transaction of the direct and static routes): sends one transaction to several
// connection workers and folds their per-target answers into one route outcome: `sent` as soon as any target wrote it
// (the others keep going and are counted per connection), otherwise the most telling failure once every target
// answered. Which targets is the scheduler's decision (./scheduler.ts); each connection worker queues or refuses on
// its own (./connection-worker.ts), or the thread owning it does (./quic-link.ts).
import type { TargetOutcome } from './connection-worker.js';
import type { TargetSender } from './connections.js';
import type { ReceiptWriter } from '../contract/receipt-writer.js';
import type { EgressOutcome } from '../contract/route.js';

/** Where the fanout writes why a transaction went nowhere (the landing receipt), or null. */
export interface CauseTarget {
  readonly receipts: ReceiptWriter | null;
  readonly routeId: number;
}

/** Failure precedence when no target wrote the transaction (most actionable first). */
function worse(a: TargetOutcome, b: TargetOutcome): TargetOutcome {
  const rank = (o: TargetOutcome): number =>
    o === 'failed' ? 4 : o === 'dropped:queue_full' ? 3 : o === 'dropped:stale' ? 2 : o === 'dropped:no_connection' ? 1 : 0;
  return rank(b) > rank(a) ? b : a;
}

/**
 * Hot: one transaction to every worker (null = the cache had no room: no_connection). `bytes` may be reused by the
 * caller once this returns (queued copies are made by the connections). `background`: a rebroadcast (each connection
 * writes it after the first sends waiting on it).
 */
export function fanout(
  workers: readonly (TargetSender | null)[],
  bytes: Uint8Array,
  why: CauseTarget | null = null,
  receiptSeq = 0,
  background = false,
): EgressOutcome | Promise<EgressOutcome> {
  let sync: TargetOutcome | null = null;
  let pending: Promise<TargetOutcome>[] | null = null;
  let senders: (TargetSender | null)[] | null = null;
  // The cause that goes with the worst answer so far (cold: read only when nothing was sent).
  let cause = 0;
  let code = 0;
  for (let i = 0; i < workers.length; i++) {
    const w = workers[i];
    const r = w === null ? 'dropped:no_connection' : w.send(bytes, background);
    if (typeof r === 'string') {
      if (r === 'sent') sync = 'sent';
      else if (sync !== 'sent') {
        const next: TargetOutcome = sync === null ? r : worse(sync, r);
        if (next !== sync) {
          cause = w?.cause ?? 0;
          code = w?.causeCode ?? 0;
        }
        sync = next;
      }
    } else {
      (pending ??= []).push(r);
      (senders ??= []).push(w);
    }
  }
  if (sync === 'sent') return 'sent';
  if (pending === null) {
    if (why !== null && why.receipts !== null) why.receipts.routeCause(receiptSeq, why.routeId, cause, code);
    return sync ?? 'dropped:no_connection';
  }
  const first: TargetOutcome = sync ?? 'dropped:no_connection';
  const all = pending;
  const from = senders!;
  return new Promise<EgressOutcome>((resolve) => {
    let left = all.length;
    let acc: TargetOutcome | null = sync;
    let done = false;
    for (let k = 0; k < all.length; k++) {
      void all[k].then((o) => {
        if (o === 'sent') {
          done = true;
          resolve('sent');
        }
        const next: TargetOutcome = acc === null ? o : worse(acc, o);
        if (next !== acc && o !== 'sent') {
          cause = from[k]?.cause ?? 0;
          code = from[k]?.causeCode ?? 0;
        }
        acc = next;
        if (--left === 0) {
          if (!done && why !== null && why.receipts !== null) why.receipts.routeCause(receiptSeq, why.routeId, cause, code);
          resolve(acc ?? first);
        }
      });
    }
  });
}
