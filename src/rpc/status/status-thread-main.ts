// A status thread, the thread's side (its own worker_thread, cold): answers its owner's asks with the upstream's
// getSignatureStatuses (status-thread.ts is the owner's side and says why). One upstream client; one ask per poll,
// its calls one after the other.
import type { MessagePort } from 'node:worker_threads';
import { UpstreamRpcClient } from '../upstream-client.js';
import { upstreamStatusAsker, type StatusAnswers } from './signature-statuses.js';

export interface StatusThreadData {
  /** Its thread role (src/threads/roles.ts): the per-thread memory metrics' label, the thread's name. */
  readonly role: 'receipt-status' | 'retry-status';
  readonly url: string;
  readonly timeoutMs: number;
  readonly allowTestCrash: boolean;
  /** Tests only (with allowTestCrash): the thread listens and is ready this much later, as a slow start would be. */
  readonly testStartDelayMs?: number;
}

/** Owner -> thread. */
export interface StatusAsk {
  readonly type: 'ask';
  readonly id: number;
  readonly signatures: readonly string[];
}

/** Thread -> owner, once: its listener is set, asks are answered from now on (a thread's start is not a wedge). */
export interface StatusThreadReady {
  readonly type: 'ready';
}

/** Thread -> owner: the poll's answers (signature-statuses.ts StatusAnswers). */
export interface StatusAnswer {
  readonly type: 'statuses';
  readonly id: number;
  readonly answers: StatusAnswers;
}

export function isStatusAnswer(m: unknown): m is StatusAnswer {
  return (m as { type?: unknown } | null)?.type === 'statuses' && typeof (m as { id?: unknown }).id === 'number';
}

export function isStatusThreadReady(m: unknown): m is StatusThreadReady {
  return (m as { type?: unknown } | null)?.type === 'ready';
}

function isStatusAsk(m: unknown): m is StatusAsk {
  return (m as { type?: unknown } | null)?.type === 'ask' && Array.isArray((m as { signatures?: unknown }).signatures);
}

export function runStatusThread(data: StatusThreadData, port: MessagePort): void {
  const delay = data.allowTestCrash ? (data.testStartDelayMs ?? 0) : 0;
  if (delay > 0) setTimeout(() => listen(data, port), delay);
  else listen(data, port);
}

function listen(data: StatusThreadData, port: MessagePort): void {
  const asker = upstreamStatusAsker(new UpstreamRpcClient(data.url, data.timeoutMs), data.timeoutMs);
  let hung = false; // tests only: the thread stops answering (a wedged thread)
  port.on('message', (m: unknown) => {
    const type = (m as { type?: unknown } | null)?.type;
    if (data.allowTestCrash && type === 'crash') throw new Error('status thread: crash asked by a test');
    if (data.allowTestCrash && type === 'hang') hung = true;
    if (hung || !isStatusAsk(m)) return;
    // The asker settles with answers, never rejects (a failed call is in `failure`).
    void asker.ask(m.signatures).then((answers) => port.postMessage({ type: 'statuses', id: m.id, answers } satisfies StatusAnswer));
  });
  port.postMessage({ type: 'ready' } satisfies StatusThreadReady);
}
