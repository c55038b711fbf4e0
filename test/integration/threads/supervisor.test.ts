// The thread supervisor (src/threads/supervisor.ts) on real worker threads (test/fixtures/threads/crashing-thread.mjs):
// a run that crashes is restarted after a backoff that doubles up to its cap, a run that lasted the stable time starts
// the backoff over, a run not ready within the start-up timeout is ended and replaced, stop() gives a run its grace
// and then ends it, and a first run that never got ready is not restarted when the owner says so. Delays are read
// from the restart log lines (the policy's exact figures) and measured between a run's end and the next spawn.
import { Worker } from 'node:worker_threads';
import { pino, type Logger } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Supervisor, type SupervisedRun, type SupervisorOptions } from '../../../src/threads/supervisor.js';
import type { RestartPolicy } from '../../../src/threads/policies.js';
import { waitFor } from '../../helpers/wait-for.js';

const FIXTURE = new URL('../../fixtures/threads/crashing-thread.mjs', import.meta.url);

interface Behaviour {
  readonly readyAfterMs?: number | null;
  readonly crashAfterMs?: number | null;
  readonly ignoreStop?: boolean;
}

/** A supervisor of the fixture thread that records each spawn, each end and each restart line. */
function harness(policy: Partial<RestartPolicy>, behaviour: (attempt: number) => Behaviour, extra: Partial<SupervisorOptions> = {}) {
  const spawnedAt: number[] = [];
  const endedAt: number[] = [];
  const lines: { restartInMs: number; role: string; attempt: number; event: string }[] = [];
  const log: Logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  const workers: Worker[] = [];
  const sup = new Supervisor({
    role: 'telemetry',
    log,
    policy,
    launch: ({ attempt, ready }): SupervisedRun => {
      spawnedAt.push(performance.now());
      const w = new Worker(FIXTURE, { workerData: behaviour(attempt), name: 'telemetry' });
      workers.push(w);
      w.on('message', (m) => m === 'ready' && ready());
      w.on('error', () => undefined); // the crash: the exit below ends the run
      return { ended: new Promise((r) => w.once('exit', r)), kill: () => w.terminate() };
    },
    onEnded: () => void endedAt.push(performance.now()),
    ...extra,
  });
  sups.push(sup);
  return { sup, spawnedAt, endedAt, lines, workers };
}

const sups: Supervisor[] = [];
afterEach(async () => {
  await Promise.all(sups.splice(0).map((s) => s.stop(0)));
});

/** Timer lateness allowed on a shared two-core box; far below the differences the tests tell apart. */
const SLACK_MS = 250;

describe('thread supervisor', () => {
  it('restarts a crashing thread after a backoff that doubles per consecutive crash, up to its cap', async () => {
    const h = harness({ firstBackoffMs: 100, maxBackoffMs: 400, stableMs: 60_000, startupTimeoutMs: null }, () => ({ crashAfterMs: 0 }));
    h.sup.start();
    await waitFor('five restarts', () => h.sup.restarts, (n) => n >= 5, 20_000);
    expect(h.lines.slice(0, 5).map((l) => l.restartInMs)).toEqual([100, 200, 400, 400, 400]);
    expect(h.lines[0]).toMatchObject({ event: 'thread_restart', role: 'telemetry', attempt: 1 });
    await waitFor('the sixth spawn', () => h.spawnedAt.length, (n) => n >= 6, 20_000);
    // What was waited really: from each run's end to the next spawn.
    const waited = [100, 200, 400, 400, 400].map((_, i) => h.spawnedAt[i + 1] - h.endedAt[i]);
    [100, 200, 400, 400, 400].forEach((want, i) => {
      expect(waited[i]).toBeGreaterThanOrEqual(want - 5);
      expect(waited[i]).toBeLessThan(want + SLACK_MS);
    });
  });

  it('starts the backoff over after a run that lasted the stable time', async () => {
    // Each run lives ~1.2 s, past the 1 s stable time: every restart waits the first backoff, never more. (A run that
    // crashes at once lives far less than 1 s even while a worker's start is slow on a loaded box.)
    const h = harness({ firstBackoffMs: 100, maxBackoffMs: 5_000, stableMs: 1_000, startupTimeoutMs: null }, () => ({ crashAfterMs: 1_200 }));
    h.sup.start();
    await waitFor('three restarts', () => h.sup.restarts, (n) => n >= 3, 20_000);
    expect(h.lines.slice(0, 3).map((l) => l.restartInMs)).toEqual([100, 100, 100]);
    // The same thread crashing at once doubles: the reset came from the run's length, not from the policy.
    const fast = harness({ firstBackoffMs: 100, maxBackoffMs: 5_000, stableMs: 1_000, startupTimeoutMs: null }, () => ({ crashAfterMs: 0 }));
    fast.sup.start();
    await waitFor('three restarts', () => fast.sup.restarts, (n) => n >= 3, 20_000);
    expect(fast.lines.slice(0, 3).map((l) => l.restartInMs)).toEqual([100, 200, 400]);
  });

  it('ends a run not ready within the start-up timeout and replaces it; a ready run is left alone', async () => {
    // Attempt 0 never says ready; attempt 1 says so after 50 ms.
    const h = harness({ firstBackoffMs: 100, maxBackoffMs: 100, stableMs: 60_000, startupTimeoutMs: 400 }, (a) => ({ readyAfterMs: a === 0 ? null : 50 }));
    h.sup.start();
    expect(await h.sup.whenReady()).toBe(true);
    expect(h.sup.restarts).toBe(1);
    const lived = h.endedAt[0] - h.spawnedAt[0];
    expect(lived).toBeGreaterThanOrEqual(395);
    expect(lived).toBeLessThan(400 + SLACK_MS);
    // The ready run outlives the start-up timeout several times over.
    await new Promise((r) => setTimeout(r, 1_200));
    expect(h.sup.restarts).toBe(1);
    expect(h.sup.ready).toBe(true);
    expect(h.spawnedAt).toHaveLength(2);
  });

  it('stop() lets a run that returns end within its grace, and ends one that does not when the grace is over', async () => {
    const polite = harness({ stopGraceMs: 3_000 }, () => ({}));
    polite.sup.start();
    await polite.sup.whenReady();
    const t0 = performance.now();
    polite.workers[0].postMessage('stop');
    await polite.sup.stop();
    expect(performance.now() - t0).toBeLessThan(1_500);
    expect(polite.sup.restarts).toBe(0);

    const stubborn = harness({ stopGraceMs: 600 }, () => ({ ignoreStop: true }));
    stubborn.sup.start();
    await stubborn.sup.whenReady();
    const t1 = performance.now();
    stubborn.workers[0].postMessage('stop');
    await stubborn.sup.stop();
    const took = performance.now() - t1;
    expect(took).toBeGreaterThanOrEqual(595);
    expect(took).toBeLessThan(600 + SLACK_MS + 500); // terminate() included
    expect(stubborn.workers[0].threadId).toBe(-1); // the thread is gone
    expect(stubborn.sup.restarts).toBe(0);
  });

  it('does not restart a first run that ended before it was ready when the owner reports that start itself', async () => {
    const h = harness({ firstBackoffMs: 50 }, () => ({ readyAfterMs: null, crashAfterMs: 0 }), { restartIfFirstNeverReady: false });
    h.sup.start();
    expect(await h.sup.whenReady()).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect(h.spawnedAt).toHaveLength(1);
    expect(h.sup.restarts).toBe(0);
  });
});
