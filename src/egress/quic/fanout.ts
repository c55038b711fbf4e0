// Fanout (QUIC thread, HOT: once per transaction of the direct and static routes): sends one transaction to several
// connection workers and folds their per-target answers into one route outcome: `sent` as soon as any target wrote it
// (the others keep going and are counted per connection), otherwise the most telling failure once every target
// answered. Which targets is the scheduler's decision (./scheduler.ts); each connection worker queues or refuses on
// its own (./connection-worker.ts), or the thread owning it does (./quic-link.ts).
import type { TargetOutcome } from './connection-worker.js';
import type { TargetSender } from './connections.js';
import type { EgressOutcome } from '../contract/route.js';

/** Failure precedence when no target wrote the transaction (most actionable first). */
function worse(a: TargetOutcome, b: TargetOutcome): TargetOutcome {
  const rank = (o: TargetOutcome): number =>
    o === 'failed' ? 4 : o === 'dropped:queue_full' ? 3 : o === 'dropped:stale' ? 2 : o === 'dropped:no_connection' ? 1 : 0;
  return rank(b) > rank(a) ? b : a;
}

/**
 * Hot: one transaction to every worker (null = the cache had no room: no_connection). `bytes` may be reused by the
 * caller once this returns (queued copies are made by the connections).
 */
export function fanout(workers: readonly (TargetSender | null)[], bytes: Uint8Array): EgressOutcome | Promise<EgressOutcome> {
  let sync: TargetOutcome | null = null;
  let pending: Promise<TargetOutcome>[] | null = null;
  for (let i = 0; i < workers.length; i++) {
    const w = workers[i];
    const r = w === null ? 'dropped:no_connection' : w.send(bytes);
    if (typeof r === 'string') {
      if (r === 'sent') sync = 'sent';
      else if (sync !== 'sent') sync = sync === null ? r : worse(sync, r);
    } else {
      (pending ??= []).push(r);
    }
  }
  if (sync === 'sent' || pending === null) return sync ?? 'dropped:no_connection';
  const first: TargetOutcome = sync ?? 'dropped:no_connection';
  const all = pending;
  return new Promise<EgressOutcome>((resolve) => {
    let left = all.length;
    let acc: TargetOutcome | null = sync;
    for (const p of all) {
      void p.then((o) => {
        if (o === 'sent') resolve('sent');
        acc = acc === null ? o : worse(acc, o);
        if (--left === 0) resolve(acc ?? first);
      });
    }
  });
}
