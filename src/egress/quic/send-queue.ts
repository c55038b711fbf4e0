// One class of a connection worker's waiting transactions (QUIC thread; HOT when a peer is slow): a FIFO of copied
// transactions, each with its stale deadline and its answer. A ConnectionWorker holds two, first sends and
// rebroadcasts (./connection-worker.ts). Arrays + head index, compacted when drained (or past 1,024 taken), so a
// steady queue allocates nothing per transaction beyond the copy and the promise. Deadlines never decrease along a
// queue (one wait limit per connection, read when a transaction is queued).

type Resolve<O> = (o: O) => void;

const EMPTY = new Uint8Array(0);

export class SendQueue<O> {
  private tx: Uint8Array[] = [];
  private deadline: number[] = [];
  private resolve: Resolve<O>[] = [];
  private head = 0;

  get size(): number {
    return this.tx.length - this.head;
  }

  /** The oldest transaction (undefined when empty). */
  headTx(): Uint8Array | undefined {
    return this.head < this.tx.length ? this.tx[this.head] : undefined;
  }

  /** The oldest transaction's deadline (Infinity when empty). */
  headDeadline(): number {
    return this.head < this.tx.length ? this.deadline[this.head] : Infinity;
  }

  /** Queues a copy of `tx` (the caller reuses its buffer); the promise answers when it leaves the queue. */
  push(tx: Uint8Array, deadline: number): Promise<O> {
    // new Uint8Array(x) always copies.
    this.tx.push(new Uint8Array(tx));
    this.deadline.push(deadline);
    return new Promise<O>((r) => this.resolve.push(r));
  }

  /** Removes the oldest transaction and returns its answer function (the caller counts and calls it). */
  shift(): Resolve<O> {
    const i = this.head++;
    this.tx[i] = EMPTY;
    const r = this.resolve[i];
    if (this.head === this.tx.length) {
      this.tx = [];
      this.deadline = [];
      this.resolve = [];
      this.head = 0;
    } else if (this.head > 1024) {
      this.tx = this.tx.slice(this.head);
      this.deadline = this.deadline.slice(this.head);
      this.resolve = this.resolve.slice(this.head);
      this.head = 0;
    }
    return r;
  }
}
