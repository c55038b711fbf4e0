// What refusing two different Content-Length headers would cost the front (issue #15): a uWS server answering POST
// with the same header reads as src/http/request.ts (seven getHeader calls), with and without walking every header
// (req.forEach) to count Content-Length. Run: node dist/bench/front/dup-content-length-cost.js <port> <walk: 0|1>;
// drive it with wrk (scripts in the bench's run notes). Front thread, HOT path being measured; not part of `make bench`.
import { loadUws } from '../../src/native/uws.js';

const port = Number(process.argv[2] ?? 9901);
const walk = process.argv[3] === '1';
const { uws } = loadUws();
const names = ['x-request-id', 'content-length', 'content-type', 'x-token', 'x-api-key', 'authorization', 'transfer-encoding'];
let sink = 0;
/** The maintained build's name for the header walk (the legacy build's is forEachHeader); run on the maintained build. */
interface HeaderWalk {
  forEach(cb: (key: string, value: string) => void): void;
}
uws
  .App()
  .post('/*', (res, req) => {
    for (const n of names) sink += req.getHeader(n).length;
    if (walk) {
      let count = 0;
      (req as unknown as HeaderWalk).forEach((k) => {
        if (k === 'content-length') count++;
      });
      sink += count;
    }
    res.onAborted(() => undefined);
    res.onData((_chunk, last) => {
      if (last) res.cork(() => res.end('{"ok":true}'));
    });
  })
  .listen('127.0.0.1', port, (t) => {
    if (!t) process.exit(1);
    console.log(`listening ${port} walk=${walk} ${sink}`);
  });
