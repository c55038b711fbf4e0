// One POST (caller's thread; on the submit path, so kept lean): the key headers, the timeout, the caller's
// AbortSignal; a failure before any answer becomes the client's own reason (timeout, aborted, network_error). Two
// ways to send, chosen once at construction (httpSender):
//   an undici Dispatcher (Agent, Pool, Client) as `dispatcher` and no `fetch`: its request() API, about half the CPU
//     of fetch per call (bench/results/client-http.md): the fast path for a trading process;
//   otherwise fetch: options.fetch or globalThis.fetch (keep-alive by default in Node), `dispatcher` passed along.
// Structural types only, so the entry needs neither DOM types nor undici at compile or run time.

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

/** The part of undici's Dispatcher.request() the client uses. */
export interface DispatcherLike {
  request(options: {
    origin: string;
    path: string;
    method: 'POST';
    headers: Record<string, string>;
    body: string;
    signal: AbortSignal;
  }): Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined>; body: { text(): Promise<string> } }>;
}

/** Sends one POST and reads the whole answer; throws when no answer came. */
export type HttpSender = (url: URL, headers: Record<string, string>, body: string, signal: AbortSignal) => Promise<HttpAnswer>;

export interface PostTarget {
  readonly send: HttpSender;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

function isDispatcher(d: unknown): d is DispatcherLike {
  return d !== null && typeof d === 'object' && typeof (d as { request?: unknown }).request === 'function';
}

function headerGetter(h: Record<string, string | string[] | undefined>): HttpAnswer['headers'] {
  return {
    get: (name: string): string | null => {
      const v = h[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
  };
}

/** The sender for these options (see the header): the dispatcher's request() when it has one and no fetch is given. */
export function httpSender(fetchFn: FetchLike | undefined, dispatcher: unknown): HttpSender {
  if (fetchFn === undefined && isDispatcher(dispatcher)) {
    return async (url, headers, body, signal) => {
      const res = await dispatcher.request({ origin: url.origin, path: url.pathname + url.search, method: 'POST', headers, body, signal });
      return { status: res.statusCode, text: await res.body.text(), headers: headerGetter(res.headers) };
    };
  }
  const f = fetchFn ?? (globalThis.fetch as unknown as FetchLike | undefined);
  if (typeof f !== 'function') throw new TypeError('no fetch: pass options.fetch, or an undici dispatcher');
  return async (url, headers, body, signal) => {
    const init: RequestInitLike = { method: 'POST', headers, body, signal };
    if (dispatcher !== undefined) init.dispatcher = dispatcher;
    const res = await f(url.href, init);
    return { status: res.status, text: await res.text(), headers: res.headers };
  };
}

/** Why no answer came: the client's reason and a message without the URL's secrets (there are none: no ?key=). */
export interface NoAnswer {
  readonly reason: 'timeout' | 'aborted' | 'network_error';
  readonly message: string;
  readonly cause: unknown;
}

function noAnswer(err: unknown, timeoutMs: number, what: string): NoAnswer {
  const e = err as { name?: unknown; code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } } | null;
  if (e?.name === 'TimeoutError') return { reason: 'timeout', message: `${what}: no answer within ${timeoutMs} ms`, cause: err };
  if (e?.name === 'AbortError') return { reason: 'aborted', message: `${what}: aborted by the caller`, cause: err };
  // fetch wraps the socket error in `cause`; undici's request() throws it with its own `code`.
  const code = typeof e?.cause?.code === 'string' ? e.cause.code : typeof e?.code === 'string' ? e.code : undefined;
  const detail = code ?? (typeof e?.cause?.message === 'string' ? e.cause.message : String(e?.message ?? err));
  return { reason: 'network_error', message: `${what}: no answer (${detail})`, cause: err };
}

/** POST `body`; resolves with the answer (any status) or a NoAnswer value. Never throws. */
export async function post(
  target: PostTarget,
  url: URL,
  body: string,
  extraHeaders: Readonly<Record<string, string>> | undefined,
  signal: AbortSignal | undefined,
  what: string,
): Promise<HttpAnswer | NoAnswer> {
  const timeout = AbortSignal.timeout(target.timeoutMs);
  const headers = extraHeaders === undefined ? (target.headers as Record<string, string>) : { ...target.headers, ...extraHeaders };
  try {
    return await target.send(url, headers, body, signal === undefined ? timeout : AbortSignal.any([timeout, signal]));
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
