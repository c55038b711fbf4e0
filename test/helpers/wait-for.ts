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

/**
 * Waits until `cond()` holds; rejects after `timeoutMs` naming the condition (its source text). The usual wait of a
 * test on in-process or real-process state: `await until(() => got.length === 3, 2_000)`.
 */
export async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 5_000, intervalMs = 10): Promise<void> {
  await waitFor(sourceOf(cond), cond, (v) => v, timeoutMs, intervalMs);
}

/**
 * Whether `cond()` comes to hold within `timeoutMs` (checked once more at the end); never rejects on time. For a
 * wait whose outcome the test branches on, or a settle step that may give up without failing the test.
 */
export async function holdsWithin(cond: () => boolean | Promise<boolean>, timeoutMs: number, intervalMs = 10): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return cond();
}

/** The condition's source, one line, short: what a timeout message names. */
function sourceOf(cond: () => unknown): string {
  const s = cond.toString().replace(/\s+/g, ' ');
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

/** `waitFor` with the probe's first truthy value typed as found (no `undefined | null | false` left in it). */
export async function waitForValue<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
  intervalMs = 20,
): Promise<T> {
  return (await waitFor(what, probe, (v) => Boolean(v), timeoutMs, intervalMs)) as T;
}
