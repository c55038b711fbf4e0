// The subscription id of an upstream notification, found without parsing it (front thread, HOT: once per upstream
// notification). Agave writes every notification as
//   {"jsonrpc":"2.0","method":"<name>Notification","params":{"result":<R>,"subscription":<id>}}
// so the relay answers each client with the text up to <id> (the "head"), the client's own id and "}}": <R>, which
// may be a megabyte of account data or a u64 that JSON.parse would round (rentEpoch u64::MAX), is never parsed or
// re-serialised. The id is looked for from the end: `"subscription"` followed only by `:`, digits and the two closing
// braces (whitespace allowed), preceded by `,`. In valid JSON such a tail can only be the last member of the object the
// second-to-last brace closes, which in the shape above is `params`: the upstream is trusted to send that shape, as
// its answers are trusted everywhere else. A notification in another shape (members in another order) is parsed once
// and its head rebuilt (notificationHead); only then can large integers lose precision.

export interface NotificationParts {
  readonly method: string;
  readonly upstreamId: number;
  /** The text up to the subscription id; the client's message is head + id + "}}". */
  readonly head: string;
}

const PREFIX = '{"jsonrpc":"2.0","method":"';
const SUBSCRIPTION = '"subscription"';

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Agave-shaped notification -> its parts; null when the text is not in that shape (then use parseNotification). */
export function splitNotification(text: string): NotificationParts | null {
  if (!text.startsWith(PREFIX)) return null;
  const methodEnd = text.indexOf('"', PREFIX.length);
  if (methodEnd < 0) return null;
  const k = text.lastIndexOf(SUBSCRIPTION);
  if (k < 0) return null;
  let before = k - 1;
  while (before > 0 && isSpace(text.charCodeAt(before))) before--;
  if (text.charCodeAt(before) !== 0x2c /* , */) return null;
  let i = k + SUBSCRIPTION.length;
  const n = text.length;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 0x3a /* : */) return null;
  i++;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  const idStart = i;
  while (i < n && isDigit(text.charCodeAt(i))) i++;
  const idEnd = i;
  if (idEnd === idStart || idEnd - idStart > 15) return null; // ids beyond 2^53 are not ours to route
  let braces = 0;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7d /* } */) braces++;
    else if (!isSpace(c)) return null;
  }
  if (braces !== 2) return null;
  return { method: text.slice(PREFIX.length, methodEnd), upstreamId: Number(text.slice(idStart, idEnd)), head: text.slice(0, idStart) };
}

/** A notification in any member order, parsed: its parts with a rebuilt Agave-shaped head; null if it is none. */
export function parseNotification(value: unknown): NotificationParts | null {
  if (value === null || typeof value !== 'object') return null;
  const o = value as { method?: unknown; params?: { result?: unknown; subscription?: unknown } | null };
  const id = o.params?.subscription;
  if (typeof o.method !== 'string' || typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) return null;
  const result = JSON.stringify(o.params?.result ?? null);
  return { method: o.method, upstreamId: id, head: `{"jsonrpc":"2.0","method":${JSON.stringify(o.method)},"params":{"result":${result},"subscription":` };
}

/** The client's copy of a notification. */
export function withSubscriptionId(head: string, id: number): string {
  return head + id + '}}';
}
