// Settles "executed and failed, or included without execution?" when a status's err alone cannot (front thread,
// cold: called once per landing poll, after getSignatureStatuses). Asks the upstream's getTransaction (commitment
// confirmed: it serves nothing below; finalized on an Alpenglow cluster, where the two are the same and `confirmed` is
// announced for removal) for the receipts execution-outcome.ts marks, at most MAX_LOOKUPS_PER_POLL per
// poll so that a burst of failures cannot flood the upstream, and reads meta.fee (0 with an error: not executed).
// A receipt stays queued while getTransaction answers null (not yet in the node's history) or fails, until its
// trackForMs has passed; the status-based verdict then stands (executionSource "status").
import type { UpstreamRpcClient } from '../rpc/upstream-client.js';
import { executionFromMeta, type TransactionMetaLike } from './execution-outcome.js';
import type { ReceiptMetrics } from './receipt-metrics.js';
import type { ReceiptTable } from './receipt-table.js';

const MAX_LOOKUPS_PER_POLL = 16;
/** v1 is the newest format; a lower cap makes Agave refuse to render a newer transaction (-32015). */
const GET_TRANSACTION_CONFIG = Object.freeze({ encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 1 });
const GET_TRANSACTION_CONFIG_ALPENGLOW = Object.freeze({ ...GET_TRANSACTION_CONFIG, commitment: 'finalized' });

export class ExecutionConfirmer {
  private queue: number[] = [];
  private readonly queued = new Set<number>();
  /** Whether the cluster runs Alpenglow (src/telemetry/consensus-probe.ts via the health monitor); false until known. */
  alpenglow: () => boolean = () => false;

  constructor(
    private readonly table: ReceiptTable,
    private readonly upstream: UpstreamRpcClient,
    private readonly metrics: ReceiptMetrics,
    private readonly o: { readonly trackForMs: number; readonly timeoutMs: number },
  ) {}

  get size(): number {
    return this.queue.length;
  }

  /** Ask getTransaction about this receipt (its status is confirmed and its err did not settle execution). */
  enqueue(seq: number): void {
    if (this.queued.has(seq)) return;
    this.queued.add(seq);
    this.queue.push(seq);
  }

  /** One round: up to MAX_LOOKUPS_PER_POLL lookups, in order; a transport failure ends the round (retried next poll). */
  async run(now: number): Promise<void> {
    const keep: number[] = [];
    let asked = 0;
    let broken = false;
    for (const seq of this.queue) {
      const landing = this.table.landingOf(seq);
      if (landing === null || landing.executionSource === 'transaction' || now - this.table.acceptedAt(seq) > this.o.trackForMs) {
        this.queued.delete(seq);
        continue;
      }
      if (broken || asked >= MAX_LOOKUPS_PER_POLL) {
        keep.push(seq);
        continue;
      }
      asked++;
      let tx: { meta?: TransactionMetaLike | null } | null;
      try {
        tx = await this.upstream.call<{ meta?: TransactionMetaLike | null } | null>('getTransaction', [this.table.signatureOf(seq), this.alpenglow() ? GET_TRANSACTION_CONFIG_ALPENGLOW : GET_TRANSACTION_CONFIG], this.o.timeoutMs);
      } catch {
        broken = true; // the status poll logs upstream failures; this one is retried next poll
        keep.push(seq);
        continue;
      }
      const execution = executionFromMeta(tx?.meta);
      const current = this.table.landingOf(seq);
      if (execution === null || current === null) {
        if (current !== null) keep.push(seq);
        else this.queued.delete(seq);
        continue;
      }
      this.queued.delete(seq);
      if (current.execution !== execution) this.metrics.executionChanged(current.execution, execution);
      this.table.setLanded(seq, { ...current, execution, executionSource: 'transaction' });
    }
    this.queue = keep;
  }
}
