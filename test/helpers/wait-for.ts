// Polls until a condition holds, or fails the test naming what it waited for (with the last value seen). For tests
// that wait on a real process (a relay, a peer, a localnet) whose timing the box's load decides.

/** Resolves with the first value of `probe()` that `ok` accepts (default: truthy); rejects after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  ok: (v: T) => boolean = (v) => Boolean(v),
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${describe(v)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

function describe(v: unknown): string {
  try {
    return JSON.stringify(v)?.slice(0, 500) ?? String(v);
  } catch {
    return String(v);
  }
}
