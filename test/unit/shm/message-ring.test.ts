// The QUIC ingress's message ring (src/shm/message-ring.ts) between two real threads: the wake-up rules. The first
// message of a producer's turn must wake a sleeping consumer at once (not at the end of the turn: that cost a lone QUIC
// submit 35-140 us per ring), and the rest of a turn must still be delivered without waiting for the consumer's own
// timeout (1 s here). Worker threads run the compiled JS (dist/), built when stale.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { MCTL_BYTES, MCTL_WAITING } from '../../../src/shm/message-ring-layout.js';
import { MessageRingProducer, createMessageRing, requestMessageRingStop } from '../../../src/shm/message-ring.js';
import { distUrl, ensureDist } from '../../integration/egress/dist-build.js';

/** A consumer thread: counts messages (and sums their streamId) into `seen`, sleeping in waitForMessages(1000). */
function startConsumer(sab: SharedArrayBuffer, seen: Int32Array): Worker {
  return new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
    (async () => {
      const { MessageRingConsumer } = await import(workerData.url);
      const c = new MessageRingConsumer(workerData.sab);
      const seen = new Int32Array(workerData.seen);
      while (!c.stopRequested()) {
        while (c.take()) {
          Atomics.add(seen, 1, c.header.f0);
          c.release();
          Atomics.add(seen, 0, 1);
        }
        await c.waitForMessages(1000);
      }
      parentPort.postMessage('stopped');
    })().catch((e) => parentPort.postMessage(String(e && e.stack)));`,
    { eval: true, workerData: { sab, seen: seen.buffer, url: distUrl('src/shm/message-ring.js') } },
  );
}

/** Resolves once the consumer sleeps (WAITING = 1), within `ms`. */
async function asleep(sab: SharedArrayBuffer, ms: number): Promise<boolean> {
  const ctl = new Int32Array(sab, 0, MCTL_BYTES >> 2);
  const until = performance.now() + ms;
  while (performance.now() < until) {
    if (Atomics.load(ctl, MCTL_WAITING) === 1) return true;
    await new Promise((r) => setTimeout(r, 1));
  }
  return false;
}

describe('message ring wake-ups', () => {
  it('the first message of a turn wakes the sleeping consumer before the turn ends; the rest of the turn follows at its end', async () => {
    ensureDist();
    const sab = createMessageRing(64, 64);
    const seen = new Int32Array(new SharedArrayBuffer(8));
    const worker = startConsumer(sab, seen);
    const p = new MessageRingProducer(sab);
    const payload = new Uint8Array(16);
    try {
      for (let round = 0; round < 5; round++) {
        expect(await asleep(sab, 5_000)).toBe(true);
        const before = Atomics.load(seen, 0);
        // One message, then this thread stays busy (no return to its event loop) for up to 2 s: only an immediate
        // wake-up lets the consumer take it meanwhile.
        expect(p.push(1, payload, 0, 1, round, 0, 0, 0)).toBe(true);
        const t0 = performance.now();
        while (Atomics.load(seen, 0) === before && performance.now() - t0 < 2_000);
        const waitedMs = performance.now() - t0;
        expect(Atomics.load(seen, 0), `round ${round}: not taken during the producer's turn`).toBe(before + 1);
        expect(waitedMs).toBeLessThan(1_000);
        // Ten more in the same turn: the consumer may already be asleep again; the end-of-turn check wakes it (well
        // before its own 1 s timeout would).
        for (let i = 0; i < 10; i++) expect(p.push(1, payload, 0, 1, 100, 0, 0, 0)).toBe(true);
        const t1 = performance.now();
        while (Atomics.load(seen, 0) < before + 11 && performance.now() - t1 < 2_000) await new Promise((r) => setImmediate(r));
        expect(Atomics.load(seen, 0)).toBe(before + 11);
        expect(performance.now() - t1).toBeLessThan(500);
      }
      expect(Atomics.load(seen, 1)).toBe(0 + 1 + 2 + 3 + 4 + 5 * 10 * 100);
    } finally {
      requestMessageRingStop(sab);
      await worker.terminate();
    }
  }, 30_000);

  it('a note (pushLater) wakes the consumer at the end of the turn, not during it; a message pushed after it in the same turn still wakes at once', async () => {
    ensureDist();
    const sab = createMessageRing(64, 64);
    const seen = new Int32Array(new SharedArrayBuffer(8));
    const worker = startConsumer(sab, seen);
    const p = new MessageRingProducer(sab);
    const payload = new Uint8Array(16);
    try {
      for (let round = 0; round < 3; round++) {
        expect(await asleep(sab, 5_000)).toBe(true);
        const before = Atomics.load(seen, 0);
        // A note, then this thread stays busy for 300 ms: the sleeping consumer must not be woken for it meanwhile.
        expect(p.pushLater(2, payload, 0, 1, 1, 0, 0, 0)).toBe(true);
        const t0 = performance.now();
        while (performance.now() - t0 < 300);
        expect(Atomics.load(seen, 0), `round ${round}: the note woke the consumer during the producer's turn`).toBe(before);
        // A message in the same turn: it wakes the consumer at once (the note's deferred check must not hold it back).
        expect(p.push(1, payload, 0, 1, 10, 0, 0, 0)).toBe(true);
        const t1 = performance.now();
        while (Atomics.load(seen, 0) < before + 2 && performance.now() - t1 < 2_000);
        expect(Atomics.load(seen, 0), `round ${round}: the message after a note was not taken during the turn`).toBe(before + 2);
        // Woken, not the consumer's own 1 s timeout (it parked ~300 ms before this push).
        expect(performance.now() - t1).toBeLessThan(250);
        // A note alone: taken once the turn ends, well before the consumer's own 1 s timeout.
        expect(await asleep(sab, 5_000)).toBe(true);
        expect(p.pushLater(2, payload, 0, 1, 100, 0, 0, 0)).toBe(true);
        const t2 = performance.now();
        while (Atomics.load(seen, 0) < before + 3 && performance.now() - t2 < 2_000) await new Promise((r) => setImmediate(r));
        expect(Atomics.load(seen, 0)).toBe(before + 3);
        expect(performance.now() - t2).toBeLessThan(500);
      }
      expect(Atomics.load(seen, 1)).toBe(3 * (1 + 10 + 100));
    } finally {
      requestMessageRingStop(sab);
      await worker.terminate();
    }
  }, 30_000);
});
