// Fanout (QUIC thread, HOT: once per transaction of the direct and static routes): sends one transaction to several
// connection workers and folds their per-target answers into one route outcome: `sent` as soon as any target wrote it
// (the others keep going and are counted per connection), otherwise the most telling failure once every target
// answered. Which targets is the scheduler's decision (./scheduler.ts); each connection worker queues or refuses on
// its own (./connection-worker.ts), or the thread owning it does (./quic-link.ts).
import type { TargetOutcome } from './connection-worker.js';
import type { TargetSender } from './connections.js';
import { sendResult, type MutableSendResult, type SendResult } from '../contract/route.js';

/** Failure precedence when no target wrote the transaction (most actionable first). */
function worse(a: TargetOutcome, b: TargetOutcome): TargetOutcome {
  const rank = (o: TargetOutcome): number =>
    o === 'failed' ? 4 : o === 'dropped:queue_full' ? 3 : o === 'dropped:stale' ? 2 : o === 'dropped:no_connection' ? 1 : 0;
  return rank(b) > rank(a) ? b : a;
}

/**
 * Hot: one transaction to every worker (null = the cache had no room: no_connection). `bytes` may be reused by the
 * caller once this returns (queued copies are made by the connections). `background`: a rebroadcast (each connection
 * writes it after the first sends waiting on it). `out` carries the route's targets and target slot in; a synchronous
 * answer is `out` itself, filled (the route's reused result), an asynchronous one a fresh SendResult with the same
 * targets. The cause is the connection's that gave the worst answer (TargetSender.cause, read right after its send).
 */
export function fanout(
  workers: readonly (TargetSender | null)[],
  bytes: Uint8Array,
  out: MutableSendResult,
  background = false,
): SendResult | Promise<SendResult> {
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
  if (sync === 'sent' || pending === null) {
    out.outcome = sync ?? 'dropped:no_connection';
    out.cause = sync === 'sent' ? 0 : cause;
    out.code = sync === 'sent' ? 0 : code;
    return out;
  }
  const first: TargetOutcome = sync ?? 'dropped:no_connection';
  const all = pending;
  const from = senders!;
  const targets = out.targets;
  const targetSlot = out.targetSlot;
  return new Promise<SendResult>((resolve) => {
    let left = all.length;
    let acc: TargetOutcome | null = sync;
    let done = false;
    for (let k = 0; k < all.length; k++) {
      void all[k].then((o) => {
        if (o === 'sent' && !done) {
          done = true;
          resolve(sendResult('sent', targets, targetSlot));
        }
        const next: TargetOutcome = acc === null ? o : worse(acc, o);
        if (next !== acc && o !== 'sent') {
          cause = from[k]?.cause ?? 0;
          code = from[k]?.causeCode ?? 0;
        }
        acc = next;
        if (--left === 0 && !done) resolve(sendResult(acc ?? first, targets, targetSlot, cause, code));
      });
    }
  });
}

/**
 * A fanout that ends after its route began closing is `dropped:shutdown` (close() aborted it, whatever the connection
 * reported); a synchronous answer is returned as it is (the route checked `closed` before sending).
 */
export function shutdownAware(r: SendResult | Promise<SendResult>, route: { readonly closed: boolean }): SendResult | Promise<SendResult> {
  if (!(r instanceof Promise)) return r;
  return r.then((a) => (a.outcome === 'sent' || !route.closed ? a : sendResult('dropped:shutdown', a.targets, a.targetSlot, a.cause, a.code)));
}
