// A status thread (src/rpc/status/status-thread.ts, issue #28 item 2): the getSignatureStatuses calls of the landing
// tracker and the rebroadcast scheduler run in their own worker_thread against a real HTTP upstream (node:http on
// loopback), one message each way per poll however many calls of 256 it takes; the values come back in the order
// asked; a failed call ends the poll with the upstream client's message and the values before it; while the thread is
// down (it crashed, or stopped answering and was ended) the owner's own asker answers until the thread is back.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import type { SignatureStatus, SignatureStatusAsker, StatusAnswers } from '../../../src/rpc/status/signature-statuses.js';
import { StatusThread } from '../../../src/rpc/status/status-thread.js';
import { waitFor } from '../../helpers/wait-for.js';
import { distUrl, ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';

const LANDED: SignatureStatus = { slot: 42, err: null, confirmationStatus: 'confirmed' };
let upstream: Server;
let url: string;
/** Signatures the upstream was asked about, per call. */
const asked: string[][] = [];
/** Fail the call after this many more (-1: never). */
let failAfter = -1;

beforeAll(async () => {
  ensureDistFresh();
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (failAfter === 0) {
        failAfter = -1;
        res.writeHead(500).end();
        return;
      }
      if (failAfter > 0) failAfter--;
      const call = JSON.parse(body) as { id: number; method: string; params: [string[], unknown] };
      asked.push(call.params[0]);
      const value = call.params[0].map((s) => (s.startsWith('landed') ? LANDED : null));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: { context: { slot: 50 }, value } }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => upstream.close(r));
});

/** The owner's own asker in these tests: counts its calls, answers every signature unknown. */
function frontAsker(): SignatureStatusAsker & { calls: number } {
  const a = {
    calls: 0,
    ask(signatures: readonly string[]): Promise<StatusAnswers> {
      a.calls++;
      return Promise.resolve({ values: signatures.map(() => null), failure: null });
    },
  };
  return a;
}

/** A started thread, once ready (polls asked before are the owner's: the last test). */
async function startThread(fallback: SignatureStatusAsker, timeoutMs = 2_000): Promise<StatusThread> {
  const t = new StatusThread({ role: 'receipt-status', url, timeoutMs, log: createLogger('silent', 'test'), fallback, workerFile: new URL(distUrl('workers/status-worker.js')), allowTestCrash: true });
  t.start();
  await waitFor('the status thread ready', async () => t.running, (up) => up, 15_000);
  return t;
}

describe('status thread', () => {
  it('asks the upstream from its own thread, 256 signatures a call, and hands the values back in order', async () => {
    const front = frontAsker();
    const t = await startThread(front);
    try {
      const sigs = Array.from({ length: 300 }, (_, i) => (i % 100 === 7 ? `landed-${i}` : `unknown-${i}`));
      asked.length = 0;
      const answers = await t.ask(sigs);
      expect(answers.failure).toBeNull();
      expect(answers.values).toEqual(sigs.map((s) => (s.startsWith('landed') ? LANDED : null)));
      expect(asked).toEqual([sigs.slice(0, 256), sigs.slice(256)]); // Agave's limit per call, in order
      expect(t.polls).toEqual({ status_thread: 1, caller: 0 });
      expect(front.calls).toBe(0);
    } finally {
      await t.stop();
    }
  });

  it("a failed call ends the poll with the upstream client's message and the values before it; the next poll is answered", async () => {
    const t = await startThread(frontAsker());
    try {
      failAfter = 1; // the second call of the poll fails
      const sigs = Array.from({ length: 512 }, (_, i) => `landed-${i}`);
      const answers = await t.ask(sigs);
      expect(answers.failure).toBe('upstream getSignatureStatuses answered HTTP 500');
      expect(answers.values).toHaveLength(256);
      expect((await t.ask(['landed-a'])).values).toEqual([LANDED]);
    } finally {
      await t.stop();
    }
  });

  it('while the thread is down its owner asks; the thread is started again and takes over', async () => {
    const front = frontAsker();
    const t = await startThread(front);
    try {
      expect((await t.ask(['landed-x'])).values).toEqual([LANDED]);
      t.crashForTest();
      await waitFor('the thread ended', async () => t.running, (up) => !up, 5_000);
      expect(t.restarts).toBe(1);
      expect((await t.ask(['landed-y'])).values).toEqual([null]); // the owner's asker (it knows nothing here)
      expect(front.calls).toBe(1);
      await waitFor('the thread is back', async () => t.running, (up) => up, 5_000);
      expect((await t.ask(['landed-z'])).values).toEqual([LANDED]);
      expect(t.polls).toEqual({ status_thread: 2, caller: 1 });
    } finally {
      await t.stop();
    }
  });

  it('a thread that stops answering is ended when its poll misses the deadline; its owner asks until it is replaced', async () => {
    const front = frontAsker();
    // A call's timeout of 1 s, not less: a fresh thread's first call (its connection, its code's first run) took more
    // than 200 ms on a loaded CI host (stop 41's Node 24 phase) and failed the ask this test needs answered.
    const t = await startThread(front, 1_000);
    try {
      expect(await t.ask(['landed-h'])).toEqual({ values: [LANDED], failure: null });
      t.hangForTest();
      // 1 call x 1 s + 1 s: answered as a failed call, nothing asked
      expect(await t.ask(['landed-i'])).toEqual({ values: [], failure: 'the status thread did not answer in time' });
      await waitFor('the wedged thread ended', async () => t.running, (up) => !up, 5_000);
      expect(t.restarts).toBe(1);
      expect((await t.ask(['landed-j'])).values).toEqual([null]); // the owner's asker meanwhile
      await waitFor('a new thread is up', async () => t.running, (up) => up, 5_000);
      expect(await t.ask(['landed-k'])).toEqual({ values: [LANDED], failure: null });
    } finally {
      await t.stop();
    }
  });

  it('polls asked before the thread is ready are asked by the owner, at once; the slow thread is not ended and answers the next', async () => {
    const front = frontAsker();
    // The thread is ready 2.5 s after its spawn (a busy host loading its modules); its poll deadline would be 2 s (a
    // call's timeout of 1 s: see above why not less).
    const t = new StatusThread({ role: 'receipt-status', url, timeoutMs: 1_000, log: createLogger('silent', 'test'), fallback: front, workerFile: new URL(distUrl('workers/status-worker.js')), allowTestCrash: true, testStartDelayMs: 2_500 });
    t.start();
    try {
      const started = Date.now();
      expect(await t.ask(['landed-s'])).toEqual({ values: [null], failure: null }); // the owner's asker's answer
      expect(Date.now() - started).toBeLessThan(1_500); // not held until the thread is ready
      expect(front.calls).toBe(1);
      expect(t.polls).toEqual({ status_thread: 0, caller: 1 });
      // Once ready, the thread answers; it was waited for, not ended as wedged.
      await waitFor('the slow thread ready', async () => t.running, (up) => up, 10_000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_400);
      expect(await t.ask(['landed-s'])).toEqual({ values: [LANDED], failure: null });
      expect(t.polls).toEqual({ status_thread: 1, caller: 1 });
      expect(t.restarts).toBe(0);
    } finally {
      await t.stop();
    }
  });

  it('after stop, nothing is left running and a pending ask is failed, not left hanging', async () => {
    const t = await startThread(frontAsker());
    const settled = t.ask(['landed-p']).then((a) => a.failure ?? 'answered');
    await t.stop();
    // Either the answer came first or the stop ended the poll: never a promise that never settles.
    expect(await Promise.race([settled, new Promise((r) => setTimeout(() => r('hung'), 3_000))])).toMatch(/^(answered|the status thread was stopped)$/);
    expect(t.running).toBe(false);
  });
});
