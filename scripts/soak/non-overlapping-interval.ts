// A task run every interval, never twice at once: a tick that finds the previous run still going is skipped (soak
// driver process, cold). The observers poll the relay and the localnet with it.
export class NonOverlappingInterval {
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  start(intervalMs: number, task: () => Promise<unknown>): void {
    this.stop();
    this.timer = setInterval(() => {
      if (this.busy) return;
      this.busy = true;
      void task().finally(() => (this.busy = false));
    }, intervalMs);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
