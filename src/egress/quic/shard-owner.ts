// Which QUIC thread owns a target's connection (QUIC threads; cold per target: callers keep the answer). With
// rings.quicThreads = N, the connection to a leader's TPU or a static peer ("ip:port") lives in exactly one of the N
// threads, chosen by a hash of the address, so every thread of the process agrees without talking: thread 0 routes a
// send to the owner, and each thread pins the static peers it owns at start. FNV-1a over the address's characters:
// cheap, stable across runs and Node versions, and spreads "ip:port" strings that differ in a digit.

/** The owning thread's index in [0, threads). */
export function quicThreadOf(target: string, threads: number): number {
  if (threads <= 1) return 0;
  let h = 0x811c9dc5;
  for (let i = 0; i < target.length; i++) {
    h ^= target.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % threads;
}
