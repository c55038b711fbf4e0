// Raw TCP exchanges with an HTTP server, byte for byte: what a careful client (or a broken proxy) sends, and exactly
// what came back and when the server closed. For the HTTP-layer tests (test/integration/relay/http-*.test.ts).
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';

export interface Exchange {
  /** Everything the server sent, latin1. */
  readonly text: string;
  /** The status codes of every response head in `text`, in order. */
  readonly statuses: number[];
  /** The server closed the connection (FIN or reset) before `waitMs` was over. */
  readonly closed: boolean;
  /** Milliseconds from the first byte sent to the close, when closed. */
  readonly closedAfterMs: number | undefined;
}

export interface ExchangeOptions {
  /** Pause between chunks (each chunk is its own write, so its own TCP segment on loopback). */
  readonly gapMs?: number;
  /** How long to wait for answers and the close after the last chunk. */
  readonly waitMs?: number;
  /** Stop waiting once this many response heads arrived. */
  readonly untilStatuses?: number;
}

export function exchange(url: string, chunks: readonly (string | Buffer)[], o: ExchangeOptions = {}): Promise<Exchange> {
  const { hostname, port } = new URL(url);
  const gapMs = o.gapMs ?? 25;
  const waitMs = o.waitMs ?? 1_500;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    socket.setNoDelay(true);
    let text = '';
    let closedAt: number | undefined;
    let startedAt = 0;
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, statuses: statusesOf(text), closed: closedAt !== undefined, closedAfterMs: closedAt === undefined ? undefined : closedAt - startedAt });
    };
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      text += d;
      if (o.untilStatuses !== undefined && statusesOf(text).length >= o.untilStatuses) done();
    });
    socket.on('error', () => undefined); // a reset is a close: recorded below
    socket.on('close', () => {
      closedAt ??= Date.now();
      done();
    });
    socket.once('connect', () => {
      startedAt = Date.now();
      void (async () => {
        for (let i = 0; i < chunks.length; i++) {
          if (i > 0) await new Promise((r) => setTimeout(r, gapMs));
          if (socket.destroyed) return;
          socket.write(chunks[i]!);
        }
        timer = setTimeout(done, waitMs);
      })().catch(reject);
    });
  });
}

/**
 * Requests in turn on one kept-alive connection: each (its segments written `gapMs` apart) only once the answer to
 * the one before it is complete, as an HTTP/1.1 client without pipelining does. Stops at the first request left
 * unanswered within `waitMs`, or at the close.
 */
export function exchangeInTurn(url: string, requests: readonly (readonly string[])[], o: { readonly gapMs?: number; readonly waitMs?: number } = {}): Promise<Exchange> {
  const { hostname, port } = new URL(url);
  const gapMs = o.gapMs ?? 25;
  const waitMs = o.waitMs ?? 3_000;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    socket.setNoDelay(true);
    let text = '';
    let closedAt: number | undefined;
    let startedAt = 0;
    let finished = false;
    const done = (): void => {
      if (finished) return;
      finished = true;
      socket.destroy();
      resolve({ text, statuses: statusesOf(text), closed: closedAt !== undefined, closedAfterMs: closedAt === undefined ? undefined : closedAt - startedAt });
    };
    const answered = (n: number): boolean => completeAnswers(text) >= n;
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => undefined); // a reset is a close: recorded below
    socket.on('close', () => {
      closedAt ??= Date.now();
      done();
    });
    socket.once('connect', () => {
      startedAt = Date.now();
      void (async () => {
        for (let i = 0; i < requests.length; i++) {
          for (const [k, segment] of requests[i]!.entries()) {
            if (k > 0) await new Promise((r) => setTimeout(r, gapMs));
            if (socket.destroyed) return;
            socket.write(segment);
          }
          const deadline = Date.now() + waitMs;
          while (!answered(i + 1) && !socket.destroyed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
          if (!answered(i + 1)) break;
        }
        // A close right after the last answer is part of what the server did: give it a moment.
        await new Promise((r) => setTimeout(r, 300));
        done();
      })().catch(reject);
    });
  });
}

/** How many answers in `text` are complete (head and content-length body). */
function completeAnswers(text: string): number {
  let n = 0;
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(at, end));
    if (length === null) return n + 1; // uWS's own error answers: their body runs to the close
    if (text.length < end + 4 + Number(length[1])) break;
    n++;
    at = end + 4 + Number(length[1]);
  }
  return n;
}

/** Status codes of the complete-headed responses in `text`, walking each by its content-length. */
export function statusesOf(text: string): number[] {
  const out: number[] = [];
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const head = text.slice(at, end);
    const m = /^HTTP\/1\.[01] (\d{3}) /.exec(head);
    if (m === null) break;
    out.push(Number(m[1]));
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    // uWS's own error answers (505, 400) carry no content-length: their body runs to the close.
    if (length === null) break;
    at = end + 4 + Number(length[1]);
  }
  return out;
}

/** Which uWS builds (src/native/uws-builds.ts) load under this Node, asked of dist/ in a child process. */
export function loadableUwsBuilds(): ('source' | 'maintained' | 'legacy')[] {
  return (['source', 'maintained', 'legacy'] as const).filter((id) => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', "const m = await import('./dist/src/native/uws.js'); process.stdout.write(m.loadUws().build.id);"], {
      env: { PATH: process.env.PATH, SLOTRELAY_UWS_BUILD: id },
      encoding: 'utf8',
    });
    return r.status === 0 && r.stdout === id;
  });
}
