// One POST through the caller's fetch (caller's thread; on the submit path, so kept lean): the key headers, the
// timeout, the caller's AbortSignal and an optional undici dispatcher; a failure before any answer becomes the
// client's own reason (timeout, aborted, network_error). Structural types only, so the entry needs neither DOM
// types nor undici at compile or run time.

/** The part of a fetch Response the client reads. */
export interface ResponseLike {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** The part of RequestInit the client sets; `dispatcher` is undici's (Node's fetch and undici.fetch honour it). */
export interface RequestInitLike {
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  dispatcher?: unknown;
}

/** globalThis.fetch, undici.fetch, or anything with the same call shape. */
export type FetchLike = (url: string, init: RequestInitLike) => Promise<ResponseLike>;

export interface HttpAnswer {
  readonly status: number;
  readonly text: string;
  readonly headers: ResponseLike['headers'];
}

export interface PostTarget {
  readonly fetch: FetchLike;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly dispatcher: unknown;
}

/** Why no answer came: the client's reason and a message without the URL's secrets (there are none: no ?key=). */
export interface NoAnswer {
  readonly reason: 'timeout' | 'aborted' | 'network_error';
  readonly message: string;
  readonly cause: unknown;
}

function noAnswer(err: unknown, timeoutMs: number, what: string): NoAnswer {
  const name = (err as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError') return { reason: 'timeout', message: `${what}: no answer within ${timeoutMs} ms`, cause: err };
  if (name === 'AbortError') return { reason: 'aborted', message: `${what}: aborted by the caller`, cause: err };
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : String((err as Error)?.message ?? err);
  return { reason: 'network_error', message: `${what}: no answer (${detail})`, cause: err };
}

/** POST `body`; resolves with the answer (any status) or a NoAnswer value. Never throws. */
export async function post(
  target: PostTarget,
  url: string,
  body: string,
  extraHeaders: Readonly<Record<string, string>> | undefined,
  signal: AbortSignal | undefined,
  what: string,
): Promise<HttpAnswer | NoAnswer> {
  const timeout = AbortSignal.timeout(target.timeoutMs);
  const init: RequestInitLike = {
    method: 'POST',
    headers: extraHeaders === undefined ? (target.headers as Record<string, string>) : { ...target.headers, ...extraHeaders },
    body,
    signal: signal === undefined ? timeout : AbortSignal.any([timeout, signal]),
  };
  if (target.dispatcher !== undefined) init.dispatcher = target.dispatcher;
  try {
    const res = await target.fetch(url, init);
    return { status: res.status, text: await res.text(), headers: res.headers };
  } catch (err) {
    return noAnswer(err, target.timeoutMs, what);
  }
}

export function isNoAnswer(a: HttpAnswer | NoAnswer): a is NoAnswer {
  return (a as NoAnswer).reason !== undefined;
}

/** data.retryAfterMs when the relay put one there, else the Retry-After header (delta-seconds) in ms. */
export function retryAfterMsOf(data: unknown, headers: ResponseLike['headers'] | undefined): number | undefined {
  const fromData = (data as { retryAfterMs?: unknown } | null | undefined)?.retryAfterMs;
  if (typeof fromData === 'number' && Number.isFinite(fromData) && fromData >= 0) return fromData;
  const h = headers?.get('retry-after');
  if (h === null || h === undefined || !/^\d+$/.test(h.trim())) return undefined;
  return Number(h.trim()) * 1000;
}

/** The relay's request id of an answer. */
export function requestIdOf(headers: ResponseLike['headers'] | undefined): string | undefined {
  return headers?.get('x-request-id') ?? undefined;
}
