// The bounds of the load benches (bench process's child, cold set-up, then a tight answer): a server with the relay's
// uWS build that answers every POST and does nothing else the relay does (no headers read, no key, no ring, no
// receipt, no metrics). Two modes:
// - `constant` (default): the same bytes for every request, the relay's own cached answer read from a file. No
//   JavaScript server on this runtime can answer for less: what is left is uWS, V8's callback crossings and the
//   kernel's loopback TCP. Its rate next to the relay's, in the same run, bounds the ratio any relay could show.
// - `parse`: the least a JSON-RPC sendTransaction front must do in JavaScript to answer truthfully, as the
//   building-blocks note's "bare handler" (bench/front/handler-js.bench.ts): the body as UTF-8 text, JSON.parse, the
//   base64 transaction decoded into a scratch buffer, its first signature in base58, the answer's text with the
//   request's id. No validation past that. Its rate is the bound of a front that parses the request in JavaScript.
//   node dist/bench/e2e/bare-uws-answer.js <answer file> [constant|parse]   (prints `ready <port>`; ends with SIGTERM)
import { readFileSync } from 'node:fs';
import { loadUws } from '../../src/native/uws.js';
import { encodeSignatureBase58 } from '../../src/tx/index.js';

const file = process.argv[2];
const mode = process.argv[3] ?? 'constant';
if (file === undefined || (mode !== 'constant' && mode !== 'parse')) throw new Error('usage: bare-uws-answer <answer file> [constant|parse]');
const bytes = readFileSync(file);
const answer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const scratch = Buffer.alloc(4096);
const { uws } = loadUws();
const app = uws.App();

/** The parse mode's answer: what the relay answers an accepted sendTransaction, computed from the request. */
function parsedAnswer(body: Buffer): string {
  const request = JSON.parse(body.toString('utf8')) as { id: number | string | null; params: [string] };
  scratch.write(request.params[0], 'base64');
  return '{"jsonrpc":"2.0","result":"' + encodeSignatureBase58(scratch, 1) + '","id":' + JSON.stringify(request.id) + '}';
}

app.post('/*', (res) => {
  res.onAborted(() => undefined);
  if (mode === 'constant') {
    res.onData((_chunk, isLast) => {
      if (!isLast) return;
      res.writeHeader('content-type', 'application/json; charset=utf-8');
      res.end(answer);
    });
    return;
  }
  let parts: Buffer[] | null = null;
  res.onData((chunk, isLast) => {
    if (!isLast) {
      (parts ??= []).push(Buffer.from(chunk.slice(0))); // uWS neuters the chunk when this returns
      return;
    }
    const body = parts === null ? Buffer.from(chunk) : Buffer.concat([...parts, Buffer.from(chunk)]);
    res.writeHeader('content-type', 'application/json; charset=utf-8');
    res.end(parsedAnswer(body));
  });
});
app.listen('127.0.0.1', 0, (socket) => {
  if (socket === false) throw new Error('bare-uws-answer: listen failed');
  process.stdout.write(`ready ${uws.getSocketPort(socket)}\n`);
});
