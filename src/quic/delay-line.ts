// A constant-delay FIFO with one timer (localnet only: models path distance). The delay is constant, so due times
// are in insertion order and one re-armed setTimeout serves the whole queue instead of one timer per datagram.

export class DelayLine<T> {
  private readonly items: { value: T; dueMs: number }[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly delayMs: number,
    private readonly deliver: (value: T) => void,
  ) {}

  push(value: T): void {
    this.items.push({ value, dueMs: performance.now() + this.delayMs });
    if (this.timer === null) this.timer = setTimeout(this.drain, this.delayMs);
  }

  /** Drop everything pending (shutdown). */
  clear(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.items.length = 0;
    this.head = 0;
  }

  private readonly drain = (): void => {
    this.timer = null;
    const q = this.items;
    const now = performance.now();
    let head = this.head;
    while (head < q.length && q[head].dueMs <= now) this.deliver(q[head++].value);
    if (head === q.length) {
      q.length = 0;
      head = 0;
    } else if (head > 4096) {
      q.splice(0, head);
      head = 0;
    }
    this.head = head;
    if (head < q.length) this.timer = setTimeout(this.drain, Math.max(1, q[head].dueMs - now));
  };
}
