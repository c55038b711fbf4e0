// Memory per thread of the relay process (cold: one message per thread every few seconds, rendered per scrape).
// RSS is one figure for the whole process; what grew (the front's receipts, an egress worker's retry queue, a QUIC
// thread's connections) shows only in each thread's own V8 heap. Every thread publishes its heap statistics on a
// BroadcastChannel (no plumbing through each thread's workerData, and no shared-memory layout to keep in step); the
// front thread keeps the latest per thread and renders them with the process's RSS in /metrics. The soak (make soak)
// reads them to say which thread grew. A process started with --expose-gc (the soak starts the relay so) takes each
// figure right after a full collection: the thread's live size, without the sawtooth of garbage not yet collected,
// which is what tells a leak in a run of two minutes. Never in production: a full collection every few seconds per
// thread costs milliseconds of pause.
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';
import v8 from 'node:v8';
import type { TextBuilder } from './prometheus.js';
import type { ThreadRole } from '../threads/roles.js';

const CHANNEL = 'slotrelay:thread-memory';
/** How often a thread publishes (a scrape sees figures at most this old). */
export const THREAD_MEMORY_EVERY_MS = 5_000;
/** A thread not heard from in this long has ended (a restarted worker gets a new thread id). */
const STALE_AFTER_MS = 3 * THREAD_MEMORY_EVERY_MS;

export interface ThreadMemorySample {
  /** What the thread is: its role (src/threads/roles.ts THREAD_ROLES). */
  readonly role: string;
  readonly threadId: number;
  readonly heapUsedBytes: number;
  readonly heapTotalBytes: number;
  /** V8's external memory of this isolate (ArrayBuffers and native objects tied to JS ones). */
  readonly externalBytes: number;
  /** Taken right after a full collection (--expose-gc): heapUsedBytes is the live size. */
  readonly afterFullGc: boolean;
  readonly atMs: number;
}

/** `gc` exists only when the process runs with --expose-gc (V8 flags are per process: every thread has it then). */
const fullGc = (globalThis as { gc?: () => void }).gc;

function sampleNow(role: string): ThreadMemorySample {
  if (typeof fullGc === 'function') fullGc();
  const h = v8.getHeapStatistics();
  return {
    role,
    threadId,
    heapUsedBytes: h.used_heap_size,
    heapTotalBytes: h.total_heap_size,
    externalBytes: h.external_memory,
    afterFullGc: typeof fullGc === 'function',
    atMs: Date.now(),
  };
}

function isSample(m: unknown): m is ThreadMemorySample {
  const s = m as Partial<ThreadMemorySample> | null;
  return typeof s === 'object' && s !== null && typeof s.role === 'string' && typeof s.threadId === 'number' && typeof s.heapUsedBytes === 'number';
}

/**
 * Publish this thread's heap every THREAD_MEMORY_EVERY_MS until the returned stop is called. Unref'd: it never keeps a
 * thread alive. Call once per thread, at its start.
 */
export function publishThreadMemory(role: ThreadRole): () => void {
  const channel = new BroadcastChannel(CHANNEL);
  channel.unref();
  const post = (): void => channel.postMessage(sampleNow(role));
  post();
  const timer = setInterval(post, THREAD_MEMORY_EVERY_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    channel.close();
  };
}

/** The front thread's view: the latest sample of every live thread, its own included (read at render time). */
export class ThreadMemory {
  private readonly latest = new Map<number, ThreadMemorySample>();
  private readonly channel = new BroadcastChannel(CHANNEL);

  constructor(private readonly ownRole: ThreadRole = 'front') {
    this.channel.unref();
    this.channel.onmessage = (e: unknown) => {
      const data = (e as { data?: unknown }).data;
      if (isSample(data)) this.latest.set(data.threadId, data);
    };
  }

  /** Every live thread's latest figures, this one's taken now, ordered by role then thread id. */
  samples(now = Date.now()): ThreadMemorySample[] {
    const out: ThreadMemorySample[] = [sampleNow(isMainThread ? this.ownRole : `${this.ownRole}-worker`)];
    for (const [id, s] of this.latest) {
      if (now - s.atMs > STALE_AFTER_MS) this.latest.delete(id);
      else if (id !== threadId) out.push(s);
    }
    return out.sort((a, b) => (a.role === b.role ? a.threadId - b.threadId : a.role < b.role ? -1 : 1));
  }

  render(tb: TextBuilder): void {
    const m = process.memoryUsage();
    tb.declare('process_resident_memory_bytes', 'gauge', 'Resident memory of the relay process (all threads)');
    tb.sample('process_resident_memory_bytes', {}, m.rss);
    tb.declare('slotrelay_process_array_buffers_bytes', 'gauge', 'Memory of ArrayBuffers and SharedArrayBuffers of the process (rings, tables)');
    tb.sample('slotrelay_process_array_buffers_bytes', {}, m.arrayBuffers);
    const samples = this.samples();
    tb.declare('slotrelay_thread_heap_used_bytes', 'gauge', "V8 heap in use per thread (thread: role, id: the thread's id; after a full collection when run with --expose-gc)");
    for (const s of samples) tb.sample('slotrelay_thread_heap_used_bytes', { thread: s.role, id: s.threadId }, s.heapUsedBytes);
    tb.declare('slotrelay_thread_heap_total_bytes', 'gauge', 'V8 heap reserved per thread');
    for (const s of samples) tb.sample('slotrelay_thread_heap_total_bytes', { thread: s.role, id: s.threadId }, s.heapTotalBytes);
    tb.declare('slotrelay_thread_external_bytes', 'gauge', "V8 external memory per thread (its isolate's ArrayBuffers and native objects)");
    for (const s of samples) tb.sample('slotrelay_thread_external_bytes', { thread: s.role, id: s.threadId }, s.externalBytes);
  }

  close(): void {
    this.channel.close();
  }
}
