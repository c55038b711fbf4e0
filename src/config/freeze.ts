// Deep freeze for the configuration (cold: once at load on the main thread, once per task arrival in an egress
// worker). Structured cloning (Piscina task payloads, workerData) does not carry Object.freeze across threads, so a
// worker freezes its copy again on arrival.
export function deepFreeze<T>(o: T): T {
  if (o !== null && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o as Record<string, unknown>)) deepFreeze(v);
  }
  return o;
}
