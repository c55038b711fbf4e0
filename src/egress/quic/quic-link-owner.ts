// The body of QUIC thread k >= 1 (rings.quicThreads > 1; HOT: one message per transaction for a target it owns). It
// holds the connections of the leaders and static peers it owns (./shard-owner.ts) in a connection cache of its own,
// with the relay identity, gauges in its own counter region and measurements to the telemetry thread like thread 0's.
// It reads its link's request ring (src/shm/quic-link-layout.ts): each send goes to its target's connection straight
// from the ring slot (the connection copies only what it must queue) and gets one answer back on the answers ring;
// a pre-warm set replaces the previous one. At start it pins the static peers it owns and reports ready once their
// first connect attempts ended (consumer-ready.ts), so relay_ready still means every static peer was tried.
// Returns when the pool stops the link (shutdown); open connections close then, and sends still queued in them answer
// `failed` to thread 0 (which counts them as dropped:shutdown once its routes closed).
import type { MessagePort } from 'node:worker_threads';
import type { Config } from '../../config/schema.js';
import type { RoutePlan } from '../../config/route-plan.js';
import { createLogger } from '../../log/logger.js';
import { followLogLevel } from '../../log/log-level-message.js';
import { workerCounterRegion } from '../../shm/counters.js';
import { MessageRingConsumer, MessageRingProducer } from '../../shm/message-ring.js';
import { QUIC_LINK_ANSWERS, QUIC_LINK_KINDS, linkHeaderOf, publishLinkAnswer, type QuicLink } from '../../shm/quic-link-layout.js';
import type { TargetOutcome } from './connection-worker.js';
import { CONSUMER_READY } from '../contract/consumer-ready.js';
import { QuicEgress } from './quic-egress.js';
import { quicThreadOf } from './shard-owner.js';
import { useQuicheThreadCopy } from '../../quic/quiche-binary.js';
import { THREAD_ID_KIND, currentThreadId, type ThreadIdMessage } from '../../metrics/thread-cpu.js';
import { slotMsSource } from '../../telemetry/slot-ms.js';

const IDLE_WAIT_MS = 1_000;
/** Messages handled per turn before yielding to the connections' I/O. */
const TAKE_BATCH = 64;

/** The Piscina task of QUIC thread k >= 1 (structured-cloned; the SharedArrayBuffers are shared). */
export interface QuicLinkOwnerTask {
  readonly kind: 'quic-link-owner';
  /** This thread's index k in [1, plan.quicThreads). */
  readonly thread: number;
  readonly link: QuicLink;
  readonly config: Config;
  readonly plan: RoutePlan;
  readonly counters: SharedArrayBuffer;
  /** This thread's counter region (its cache's gauges). */
  readonly counterRegion: number;
  /** Its kernel thread id (thread-cpu.ts) at start, then CONSUMER_READY once the static peers it owns were tried. */
  readonly readyPort: MessagePort;
  readonly measurementPort?: MessagePort;
  readonly identitySecret?: Uint8Array;
  /** The leader-slot snapshot: only its measured slot time is read here (the stale bound, src/egress/contract/slot-timers.ts). */
  readonly snapshot?: SharedArrayBuffer;
  /** Test-only fault injection (first attempt only): the thread exits when taking send number N + 1. */
  readonly testHooks?: { readonly crashAfterSends?: number };
}

export function isQuicLinkOwnerTask(t: unknown): t is QuicLinkOwnerTask {
  return typeof t === 'object' && t !== null && (t as { kind?: unknown }).kind === 'quic-link-owner';
}

const ANSWER_CODE: Readonly<Record<TargetOutcome, number>> = Object.freeze(
  Object.fromEntries(QUIC_LINK_ANSWERS.map((o, i) => [o, i])) as Record<TargetOutcome, number>,
);

export async function runQuicLinkOwner(task: QuicLinkOwnerTask): Promise<void> {
  const { config, plan, thread } = task;
  const log = createLogger(config.log.level, 'quic-link', { quicThread: thread });
  followLogLevel(task.readyPort, [log]); // a reload's log.level (src/log/log-level-message.ts)
  const tid = currentThreadId();
  if (tid !== null) task.readyPort.postMessage({ kind: THREAD_ID_KIND, tid } satisfies ThreadIdMessage);
  // Before anything loads the binding: this thread's own copy (statics of its own; written by the build).
  useQuicheThreadCopy(thread);
  const quic = new QuicEgress(config, log, { identitySecret: task.identitySecret, gauges: workerCounterRegion(task.counters, task.counterRegion), slotMs: slotMsSource(task.snapshot) });
  if (task.measurementPort !== undefined) quic.reportMeasurementsTo(task.measurementPort);
  const requests = new MessageRingConsumer(task.link.requests);
  const answers = new MessageRingProducer(task.link.answers);
  /** Answers the answers ring had no room for (thread 0 behind): sent first on the next turn, in order. */
  const backlog: { id: number; code: number }[] = [];
  let warmParts = '';

  const answer = (id: number, o: TargetOutcome): void => {
    const code = ANSWER_CODE[o] ?? ANSWER_CODE.failed;
    if (backlog.length > 0 || answers.reserve() < 0) {
      backlog.push({ id, code });
      return;
    }
    publishLinkAnswer(answers, id, code);
  };
  const flushBacklog = (): void => {
    let i = 0;
    while (i < backlog.length && answers.reserve() >= 0) {
      publishLinkAnswer(answers, backlog[i].id, backlog[i].code);
      i++;
    }
    backlog.splice(0, i);
  };

  const cache = await quic.ready.catch(() => null);
  // The static peers this thread owns: pinned now, like thread 0 pins its own (src/egress/quic/static-route.ts).
  const own = plan.staticPeers.filter((p) => quicThreadOf(p, plan.quicThreads) === thread);
  const pinned = cache === null ? [] : own.map((p) => cache.pin(p, `static:${p}`)?.firstAttempt);
  const ready = (): void => task.readyPort.postMessage(CONSUMER_READY);
  void Promise.all(pinned).then(ready, ready);

  const crashAfter = task.testHooks?.crashAfterSends ?? -1;
  let sends = 0;
  const header = linkHeaderOf(requests.header);
  const handle = (): void => {
    const h = header;
    if (h.kind === QUIC_LINK_KINDS.send) {
      if (sends++ === crashAfter) process.exit(70); // test hook: the thread dies holding this send (never released)
      const id = h.requestId;
      if (cache === null) return answer(id, 'failed'); // no identity: logged by QuicEgress
      const txLength = h.txBytes;
      const off = requests.payloadOffset;
      // Decoded per send rather than cached by a number thread 0 gives (which a restarted thread 0 would give afresh):
      // this whole handler was 0.4 % of the thread's busy time in a CPU profile of quic-threads.bench, sendmsg ~50 %.
      const t0 = off + txLength;
      const targetBytes = h.targetBytes;
      const labelBytes = h.labelBytes;
      const target = requests.bytes.toString('latin1', t0, t0 + targetBytes);
      const label = labelBytes > 0 ? requests.bytes.toString('latin1', t0 + targetBytes, t0 + targetBytes + labelBytes) : undefined;
      const w = cache.get(target, label);
      if (w === null) return answer(id, 'dropped:no_connection');
      // The ring slot is released after this returns: the connection copies what it queues (ConnectionWorker.send).
      const r = w.send(requests.bytes.subarray(off, off + txLength), h.background);
      if (typeof r === 'string') answer(id, r);
      else void r.then((o) => answer(id, o));
    } else if (h.kind === QUIC_LINK_KINDS.prewarm) {
      warmParts += requests.bytes.toString('latin1', requests.payloadOffset, requests.payloadOffset + requests.payloadLength);
      if (!h.lastPart) return;
      const set = warmParts.split('\n').filter((l) => l.length > 0).map((l) => {
        const sp = l.indexOf(' ');
        const label = l.slice(sp + 1);
        return { target: l.slice(0, sp), label: label.length > 0 ? label : undefined };
      });
      warmParts = '';
      cache?.prewarm(set);
    }
  };

  try {
    for (;;) {
      if (requests.stopRequested()) break;
      if (backlog.length > 0) flushBacklog();
      let n = 0;
      while (n < TAKE_BATCH && requests.take()) {
        handle();
        requests.release();
        n++;
      }
      if (n === TAKE_BATCH || backlog.length > 0) await new Promise<void>((r) => setImmediate(r));
      else await requests.waitForMessages(IDLE_WAIT_MS);
    }
  } finally {
    await quic.close(); // queued sends answer now (their answers go out if thread 0 still reads)
    flushBacklog();
    task.readyPort.close();
  }
}
