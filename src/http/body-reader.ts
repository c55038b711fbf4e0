// Bounded request-body reader for uWS (front thread, hot). The common case — the whole body in the first chunk — is
// handed to the handler as a Buffer VIEW over uWS's chunk, with no copy: the handler must consume it synchronously
// (decode into the ring, or toString for JSON) because uWS neuters the chunk when the callback returns.
// Multi-chunk bodies are assembled into one buffer sized from Content-Length when known. Beyond `maxBytes` the
// request is answered 413 and the connection closed (the rest of the body is never read).
// `deferred` bodies (submissions) reach the handler after the read has been parsed (after-read.ts), as a copy.
import type { HttpResponse } from 'uWebSockets.js';
import { afterRead } from './after-read.js';
import type { RequestState } from './response.js';

export type BodyHandler = (body: Buffer) => void;

/**
 * Start reading the body. `declaredLength` is Content-Length (-1 when absent). Calls `onTooLarge` at most once, and
 * `onBody` at most once, never after the client aborted (the caller's onAborted sets st.aborted). `deferred`: onBody
 * runs from after-read.ts (its own Buffer, no longer a view), and not at all when the connection closed before that.
 */
export function readBody(
  res: HttpResponse,
  st: RequestState,
  declaredLength: number,
  maxBytes: number,
  onBody: BodyHandler,
  onTooLarge: () => void,
  deferred = false,
): void {
  if (declaredLength > maxBytes) {
    onTooLarge();
    return;
  }
  let assembled: Buffer | null = null;
  let filled = 0;
  let done = false;
  // From here the handler waits for its body: until onData runs, nothing may rely on uWS's cork (RequestState.corked).
  st.corked = false;
  st.bodyReading = true;
  res.onData((chunk, isLast) => {
    st.corked = true; // inside uWS's data callback: the socket is corked
    try {
      onChunk(chunk, isLast);
    } finally {
      st.corked = false;
    }
  });
  function onChunk(chunk: ArrayBuffer, isLast: boolean): void {
    if (done || st.aborted) return;
    if (isLast) st.bodyPending = false; // read to its end: its answer may keep the connection (http.ts)
    const n = chunk.byteLength;
    if (assembled === null && isLast) {
      done = true;
      if (n > maxBytes) onTooLarge();
      else if (deferred) {
        const copy = Buffer.copyBytesFrom(new Uint8Array(chunk)); // now: uWS neuters the chunk when this returns
        afterRead(st, () => onBody(copy));
      } else onBody(Buffer.from(chunk)); // a view, valid only during this callback
      return;
    }
    if (filled + n > maxBytes) {
      done = true;
      onTooLarge();
      return;
    }
    if (assembled === null) assembled = Buffer.allocUnsafe(declaredLength > 0 ? declaredLength : Math.min(maxBytes, 64 * 1024));
    if (filled + n > assembled.length) {
      const grown = Buffer.allocUnsafe(Math.min(maxBytes, Math.max(assembled.length * 2, filled + n)));
      assembled.copy(grown, 0, 0, filled);
      assembled = grown;
    }
    Buffer.from(chunk).copy(assembled, filled);
    filled += n;
    if (isLast) {
      done = true;
      const body = assembled.subarray(0, filled);
      if (deferred) afterRead(st, () => onBody(body));
      else onBody(body);
    }
  }
}
