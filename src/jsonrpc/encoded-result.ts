// A result answered many times, kept as the answer's BYTES up to the id (front thread; built cold, once per cached
// answer; HOT per request: only the id and the closing brace are written). A cached result given to uWS as a JS
// string is turned into UTF-8 on every answer (uWS copies a string through V8's Utf8Value) and, concatenated into
// the envelope, first flattened into a new heap string: for the ~6.9 KB getRecentPrioritizationFees answer that
// conversion was the largest item of the front thread's profile under load (30% of its busy samples in writeAll,
// plus 10% in GC), where uWS copies an ArrayBuffer's bytes as they are (bench/results/prioritization-fees.md).
// Agave's member order, as resultJson (response.ts): {"jsonrpc":"2.0","result":<result>,"id":<id>}.
import type { JsonRpcId } from './envelope.js';
import { idText, resultJson } from './response.js';

/** Room after the head for `<id>}` without a new buffer: a UUID string id with its quotes is 38 bytes. */
const ID_ROOM = 64;

export class EncodedResult {
  /** The answer up to the id, `{"jsonrpc":"2.0","result":<text>,"id":`, then ID_ROOM bytes for the id. */
  private readonly buf: Buffer;
  private readonly headBytes: number;
  /** Views of `buf` by the length of `<id>}`, made once each: an answer allocates no view. */
  private readonly views: (Buffer | undefined)[] = new Array<Buffer | undefined>(ID_ROOM + 1);

  /** `text`: the result's JSON text, as a handler would return it. */
  constructor(readonly text: string) {
    const head = '{"jsonrpc":"2.0","result":' + text + ',"id":';
    this.headBytes = Buffer.byteLength(head, 'utf8');
    // Its own memory (not the Buffer pool's slab): it lives as long as the cached answer.
    this.buf = Buffer.from(new ArrayBuffer(this.headBytes + ID_ROOM));
    this.buf.write(head, 0, 'utf8');
  }

  /**
   * The whole answer's bytes for this id. The view is valid until the next call on this object: write it at once
   * (EncodedAnswer.bytes() is called by the writer, immediately before the bytes are handed to uWS, which copies them).
   */
  answerBytes(id: JsonRpcId): Uint8Array {
    let n = typeof id === 'string' ? this.writePlainString(id) : -1;
    if (n < 0) n = this.writeIdText(idText(id));
    if (n < 0) return Buffer.from(resultJson(id, this.text), 'utf8'); // a very long string id: rare, cold
    this.buf[this.headBytes + n] = 0x7d; // }
    n += 1;
    let view = this.views[n];
    if (view === undefined) this.views[n] = view = this.buf.subarray(0, this.headBytes + n);
    return view;
  }

  /**
   * A string id of printable ASCII other than `"` and `\` (UUIDs, counters): its JSON text is itself in quotes, as
   * JSON.stringify would write it, copied a char a byte (for a UUID, ~2.5x faster than JSON.stringify and Buffer.write).
   * Returns the bytes written, or -1 (nothing promised about the buffer) when the id is not such a string or too long.
   */
  private writePlainString(id: string): number {
    const len = id.length;
    if (len + 2 >= ID_ROOM) return -1;
    const buf = this.buf;
    const at = this.headBytes;
    buf[at] = 0x22; // "
    for (let i = 0; i < len; i++) {
      const c = id.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return -1;
      buf[at + 1 + i] = c;
    }
    buf[at + 1 + len] = 0x22;
    return len + 2;
  }

  /** The id's JSON text (idText) after the head: its UTF-8 bytes, or -1 when they do not fit in ID_ROOM - 1. */
  private writeIdText(t: string): number {
    const buf = this.buf;
    const at = this.headBytes;
    if (t.length >= ID_ROOM) return -1;
    // A number or null is ASCII: a char a byte, no native call (for a number, ~6x faster than Buffer.write).
    for (let i = 0; i < t.length; i++) {
      const c = t.charCodeAt(i);
      if (c >= 0x80) {
        const n = Buffer.byteLength(t, 'utf8');
        if (n >= ID_ROOM) return -1;
        buf.write(t, at, 'utf8');
        return n;
      }
      buf[at + i] = c;
    }
    return t.length;
  }
}

/** One call's answer from an EncodedResult: the bytes are made when it is written (http.ts writeResponse). */
export class EncodedAnswer {
  constructor(
    readonly result: EncodedResult,
    readonly id: JsonRpcId,
  ) {}

  /** See EncodedResult.answerBytes: valid until the next answer from the same result. */
  bytes(): Uint8Array {
    return this.result.answerBytes(this.id);
  }

  /** The same answer as text (the answer string resultJson would have made). */
  text(): string {
    return resultJson(this.id, this.result.text);
  }
}
