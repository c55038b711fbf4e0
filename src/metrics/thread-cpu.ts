// CPU time of one thread of this process (cold: once at a thread's start, and per /metrics scrape or bench window).
// A QUIC thread learns its kernel thread id at start (thread-id message to the pool), and the pool reads that thread's
// user + system time from /proc: which QUIC thread is hot, in CPU seconds rather than event-loop busy time, which on a
// box with fewer cores than busy threads also counts the time a thread waited for a core. Linux only; elsewhere the
// id is null and nothing is reported.
import { readFileSync, readlinkSync } from 'node:fs';

/** Kernel clock ticks per second of /proc's utime and stime (USER_HZ: 100 on every Linux architecture Node runs on). */
const USER_HZ = 100;

export const THREAD_ID_KIND = 'thread-id';

export interface ThreadIdMessage {
  readonly kind: typeof THREAD_ID_KIND;
  readonly tid: number;
}

export function isThreadIdMessage(m: unknown): m is ThreadIdMessage {
  return typeof m === 'object' && m !== null && (m as { kind?: unknown }).kind === THREAD_ID_KIND && typeof (m as { tid?: unknown }).tid === 'number';
}

/** The calling thread's kernel id (a synchronous readlink runs on this thread), or null off Linux. */
export function currentThreadId(): number | null {
  try {
    const link = readlinkSync('/proc/thread-self'); // "<pid>/task/<tid>"
    const tid = Number(link.slice(link.lastIndexOf('/') + 1));
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/** User + system CPU seconds of thread `tid` of this process, or null when it is gone or unreadable. */
export function threadCpuSeconds(tid: number): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    // Fields after the command name (which may hold spaces, inside parentheses): state is field 3, utime 14, stime 15.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / USER_HZ;
  } catch {
    return null;
  }
}
