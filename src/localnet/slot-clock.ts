// The slot clock (localnet process, main thread; one timer per slot, cold). Slot n starts at genesisNs + n × slotMs
// on CLOCK_MONOTONIC (process.hrtime.bigint()), so slot boundaries do not drift with timer jitter; a late timer
// emits every slot it missed, in order. Listeners run synchronously in registration order (the bank first).
export type SlotListener = (slot: number) => void;

export class SlotClock {
  readonly slotNs: bigint;
  private genesisNs = 0n;
  private slot = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly listeners: SlotListener[] = [];

  constructor(readonly slotMs: number) {
    if (!(slotMs >= 1)) throw new Error('slotMs must be at least 1');
    this.slotNs = BigInt(Math.round(slotMs * 1e6));
  }

  onSlot(fn: SlotListener): void {
    this.listeners.push(fn);
  }

  get current(): number {
    return this.slot;
  }

  /** Start slot 0 now. */
  start(): void {
    this.genesisNs = process.hrtime.bigint();
    this.schedule();
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  slotStartNs(slot: number): bigint {
    return this.genesisNs + BigInt(slot) * this.slotNs;
  }

  /** The slot that wall-clock (monotonic) time `ns` falls in; may run ahead of `current` by a timer tick. */
  slotAtNs(ns: bigint): number {
    return ns <= this.genesisNs ? 0 : Number((ns - this.genesisNs) / this.slotNs);
  }

  private schedule(): void {
    const nextStart = this.slotStartNs(this.slot + 1);
    const delayMs = Number(nextStart - process.hrtime.bigint()) / 1e6;
    this.timer = setTimeout(() => this.tick(), Math.max(0, Math.ceil(delayMs)));
  }

  private tick(): void {
    const target = this.slotAtNs(process.hrtime.bigint());
    while (this.slot < target) {
      this.slot++;
      for (const fn of this.listeners) fn(this.slot);
    }
    if (this.timer !== null) this.schedule();
  }
}
