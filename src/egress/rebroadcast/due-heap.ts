// The rebroadcast scheduler's due order (egress consumer thread; warm: one push and one pop per rebroadcast round).
// A binary min-heap on `dueAt`, so that a scheduler tick touches only what is due (O(due · log n)) instead of
// walking the whole retry queue (up to retries.maxQueue entries) every quarter interval on the thread that also
// takes fresh transactions from the ring (issue #28 item 2: per-slot work made incremental).
// Removal is lazy: an entry that ended (landed, expired) stays until its due time comes and is skipped then; every
// item is in the heap at most once (popped before it is pushed again), so it holds at most the live entries plus
// those that ended within the last interval.

export interface DueItem {
  /** When the item is next looked at (ms, performance.now() clock). */
  dueAt: number;
}

export class DueHeap<T extends DueItem> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  /** The earliest item, or undefined when empty. */
  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    let i = a.length;
    a.push(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent].dueAt <= item.dueAt) break;
      a[i] = a[parent];
      i = parent;
    }
    a[i] = item;
  }

  /** Removes and returns the earliest item. */
  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (top === undefined || last === undefined || a.length === 0) return top;
    // Sift the last item down from the root.
    const n = a.length;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && a[r].dueAt < a[l].dueAt ? r : l;
      if (a[c].dueAt >= last.dueAt) break;
      a[i] = a[c];
      i = c;
    }
    a[i] = last;
    return top;
  }

  clear(): void {
    this.items.length = 0;
  }
}
