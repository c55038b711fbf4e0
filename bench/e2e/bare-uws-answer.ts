// The bound of the prioritization-fees load bench (bench process's child, cold set-up, then a constant answer): a
// server with the relay's uWS build that answers every POST with the same bytes — the relay's own cached answer,
// read from a file — and does nothing else (no headers read, no key, no parse, no metrics). No JavaScript server on
// this runtime can answer the call for less: what is left is uWS, V8's callback crossings and the kernel's loopback
// TCP. Its rate next to the upstream's, in the same run, bounds the ratio any relay could show on this box.
//   node dist/bench/e2e/bare-uws-answer.js <answer file>   (prints `ready <port>`; ends with its parent's SIGTERM)
import { readFileSync } from 'node:fs';
import { loadUws } from '../../src/native/uws.js';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: bare-uws-answer <answer file>');
const bytes = readFileSync(file);
const answer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const { uws } = loadUws();
const app = uws.App();
app.post('/*', (res) => {
  res.onAborted(() => undefined);
  res.onData((_chunk, isLast) => {
    if (!isLast) return;
    res.writeHeader('content-type', 'application/json; charset=utf-8');
    res.end(answer);
  });
});
app.listen('127.0.0.1', 0, (socket) => {
  if (socket === false) throw new Error('bare-uws-answer: listen failed');
  process.stdout.write(`ready ${uws.getSocketPort(socket)}\n`);
});
