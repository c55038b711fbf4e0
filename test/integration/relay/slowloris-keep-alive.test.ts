// Slow clients on a kept-alive connection (issue #30 item 9): after one answered request, a request line, headers,
// a body or garbage dribbled one byte a second on the SAME socket is closed within the slow-client bound of issue #15
// (docs/http-runtime.md), not held for http.idleTimeoutSeconds (60 here); likewise a connection whose request
// was answered early (404, 401) while its body is still arriving. Raw sockets, every loadable uWS build side by side.
// The bound is shortened to http.slowClientTimeoutSeconds: 5 (two ticks of uSockets' 4 s sweep: closed 4-8 s after it
// is armed), so that the file waits ~10 s instead of ~15 s (issue #47 item 8); a byte a second still outlasts it
// several times over, so a timer that any byte re-armed would hold the connection to the end. Not 4 (one tick): its
// close may come at the very next sweep, a moment after a connection opened, before its first request was read.
// slowloris.test.ts keeps the production 10 s (8-12 s).
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { loadableUwsBuilds } from '../../helpers/raw-http.js';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { startRelays, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';

/** http.slowClientTimeoutSeconds here: two ticks of uSockets' 4 s sweep, i.e. closed 4-8 s after it is armed. */
const SLOW_CLIENT_TIMEOUT_S = 5;
/** The bound measured from the dribble's first byte: two 4 s ticks, plus a loaded box's margin. */
const BOUND_MS = 8_000 + 2_500;

interface Outcome {
  readonly kind: string;
  /** Milliseconds from the first dribbled byte to the server's close; undefined when still open at the end. */
  closedAfterMs: number | undefined;
  /** Everything the server sent after the first answer. */
  later: string;
}

/**
 * One connection: `first` (a whole request) and its answer, then `prefix` at once and `drip` one byte a second until
 * the server closes the connection or `giveUpMs` passes.
 */
function keptAliveDribbler(url: string, kind: string, first: string, prefix: string, drip: string, giveUpMs: number): Promise<Outcome> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(port), hostname);
    socket.setEncoding('latin1');
    const out: Outcome = { kind, closedAfterMs: undefined, later: '' };
    let text = '';
    let startedAt = 0;
    let timer: NodeJS.Timeout | undefined;
    let giveUp: NodeJS.Timeout | undefined;
    let gaveUp = false;
    const finish = (): void => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve(out);
    };
    socket.on('error', () => undefined); // a reset is a close
    socket.on('close', () => {
      if (gaveUp) return;
      if (startedAt > 0) out.closedAfterMs ??= Date.now() - startedAt;
      else reject(new Error(`${kind}: closed before the first answer: ${JSON.stringify(text)}`));
      finish();
    });
    socket.on('data', (d: string) => {
      if (startedAt > 0) {
        out.later += d;
        return;
      }
      text += d;
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text);
      if (end < 0 || length === null || text.length < end + 4 + Number(length[1])) return;
      // The first answer is complete: the connection is kept alive; start the slow request on it.
      startedAt = Date.now();
      if (prefix !== '') socket.write(prefix);
      let i = 0;
      socket.write(drip[i++ % drip.length]!);
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write(drip[i++ % drip.length]!);
      }, 1_000);
      giveUp = setTimeout(() => {
        gaveUp = true;
        finish();
      }, giveUpMs);
    });
    socket.once('connect', () => socket.write(first));
  });
}

/**
 * One connection, one write: `bytes` (a whole request and what follows it in the same write), then nothing. The
 * answers seen, and when the server closed the connection, measured from the write.
 */
function sameWriteTail(url: string, kind: string, bytes: string, giveUpMs: number): Promise<Outcome & { answers: number[] }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(port), hostname);
    socket.setEncoding('latin1');
    const out = { kind, closedAfterMs: undefined as number | undefined, later: '', answers: [] as number[] };
    let startedAt = 0;
    let gaveUp = false;
    const giveUp = setTimeout(() => {
      gaveUp = true;
      socket.destroy();
    }, giveUpMs);
    socket.on('error', () => undefined); // a reset is a close
    socket.on('data', (d: string) => (out.later += d));
    socket.on('close', () => {
      clearTimeout(giveUp);
      if (!gaveUp) out.closedAfterMs = Date.now() - startedAt;
      out.answers = [...out.later.matchAll(/^HTTP\/1\.1 (\d{3}) /gm)].map((m) => Number(m[1]));
      resolve(out);
    });
    socket.once('connect', () => {
      startedAt = Date.now();
      socket.write(bytes);
    });
  });
}

const BUILDS = loadableUwsBuilds();
const HEALTH = 'GET /health HTTP/1.1\r\nhost: relay\r\n\r\n';

describe('slow clients on a kept-alive connection (http.idleTimeoutSeconds: 60, slowClientTimeoutSeconds: 5), every loadable uWS build at once', () => {
  let up: FakeRpcUpstream;
  const relays = new Map<string, RelayHandle>();
  // The relays start (and stop) side by side too.
  beforeAll(async () => {
    up = await startFakeRpcUpstream();
    const config = { upstream: { rpcUrl: up.url }, routes: { rpc: { endpoints: [up.url] } }, http: { idleTimeoutSeconds: 60, slowClientTimeoutSeconds: SLOW_CLIENT_TIMEOUT_S } };
    const started = await startRelays(BUILDS.map((build) => ({ config, env: { SLOTRELAY_UWS_BUILD: build } })));
    BUILDS.forEach((build, i) => relays.set(build, started[i]!));
  });
  afterAll(async () => {
    await Promise.all([...relays.values()].map((r) => r.stop()));
    await up?.close();
  });

  const submitHead = `POST /v1/submit HTTP/1.1\r\nhost: relay\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: application/json\r\ncontent-length: 4000\r\n\r\n`;
  const rpcHead = `POST / HTTP/1.1\r\nhost: relay\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: application/json\r\ncontent-length: 4000\r\n\r\n`;
  const noKeyHead = 'POST /v1/submit HTTP/1.1\r\nhost: relay\r\ncontent-type: application/json\r\ncontent-length: 4000\r\n\r\n';
  const nowhereHead = 'POST /nowhere HTTP/1.1\r\nhost: relay\r\ncontent-length: 4000\r\n\r\n';

  async function held(relay: RelayHandle, cases: readonly (readonly [string, 'relay' | 'rpc', string, string, string])[]): Promise<string[]> {
    const outcomes = await Promise.all(
      // Watched until just past the bound: a connection still open then is held, however long it would stay.
      cases.map(([kind, host, first, prefix, drip]) => keptAliveDribbler(host === 'relay' ? relay.relayUrl : relay.rpcUrl, kind, first, prefix, drip, BOUND_MS + 500)),
    );
    return outcomes.filter((o) => o.closedAfterMs === undefined || o.closedAfterMs > BOUND_MS).map((o) => `${o.kind}: ${o.closedAfterMs ?? 'still open'} ms`);
  }

  it.concurrent.for(BUILDS)(
    '%s: a body dribbled after an answer, and a body still arriving behind an early answer (404, 401, chunked), are closed within the slow-client bound',
    { timeout: 40_000 },
    async (build, { expect }) => {
      const relay = relays.get(build)!;
      const late = await held(relay, [
        ['body (/v1/submit)', 'relay', HEALTH, submitHead, '{'],
        ['body (JSON-RPC)', 'rpc', HEALTH, rpcHead, ' '],
        ['body behind an early 404', 'relay', HEALTH, nowhereHead, 'z'],
        ['body behind an early 405 (rpc host)', 'rpc', HEALTH, 'POST /nowhere HTTP/1.1\r\nhost: relay\r\ncontent-length: 4000\r\n\r\n', 'z'],
        ['body behind an early 401', 'relay', HEALTH, noKeyHead, '{'],
        ['chunked body behind an early 401 (JSON-RPC)', 'rpc', HEALTH, 'POST / HTTP/1.1\r\nhost: relay\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n10\r\n', ' '],
        ['body behind an early 404, first request', 'relay', nowhereHead, '', 'z'],
        ['body behind an early 401, first request', 'relay', noKeyHead, '', '{'],
      ]);
      expect(late, 'connections held past the slow-client bound').toEqual([]);
      // None of these bodies was sent (the same-write test below, run alongside, sends its own three).
      expect(up.sent().filter((b) => !submitted.has(b.toString('base64'))).length).toBe(0);
    },
  );

  // A request line or headers after an answer never reach the relay's code: on the maintained build uWS keeps the
  // idle keep-alive timer (setResponseTimeout) until the headers are complete, so they are held
  // http.idleTimeoutSeconds. Known and open there (see the report of issue #30 item 9); our source build fixes it
  // (vendor/uws-patches/0002: the first bytes of a next request start the slow-client clock), so it must pass there.
  const lineCases = [
    ['request line (relay host)', 'relay', HEALTH, '', `GET /health HTTP/1.1\r\nhost: relay\r\nx-pad: ${'a'.repeat(64)}`],
    ['request line (rpc host)', 'rpc', HEALTH, '', `GET /health HTTP/1.1\r\nhost: relay\r\nx-pad: ${'a'.repeat(64)}`],
    ['headers', 'relay', HEALTH, 'POST /v1/submit HTTP/1.1\r\n', `host: relay\r\nx-pad: ${'b'.repeat(64)}\r\n`],
    ['garbage', 'relay', HEALTH, '', 'x'],
  ] as const;
  // Issue #47 item 3: bytes that arrive in the SAME write as a request the relay answers after the read (a submission
  // parked until uWS has parsed the whole read, src/http/after-read.ts) or inside it (a JSON-RPC read): the start of a
  // next request (one `G`) or garbage. uWS keeps them while the answer is pending; the answer then armed the keep-alive
  // timer (http.idleTimeoutSeconds, 60 here: closed ~62 s in) instead of the slow-client one. Fixed in our build by
  // vendor/uws-patches/0009; the maintained prebuilt build has the same gap as the dribble above (docs/http-runtime.md).
  const submitted = new Set<string>();
  let nextLamports = 1;
  const post = (path: string, body: string): string =>
    `POST ${path} HTTP/1.1\r\nhost: relay\r\nx-api-key: ${TEST_KEY}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const rpc = (method: string, params: unknown[]): string => post('/', JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
  /** [kind, host, the one write, the transaction it submits ('' for none)] */
  const sameWriteCases = (): (readonly [string, 'relay' | 'rpc', string, string])[] => {
    // Distinct lamports: distinct signatures (the helper's payer and blockhash are fixed).
    const [a, b, c] = [1, 2, 3].map(() => legacyTransfer(1_000 + nextLamports++).base64) as [string, string, string];
    for (const t of [a, b, c]) submitted.add(t);
    return [
      ['/v1/submit + G', 'relay', post('/v1/submit', JSON.stringify({ transaction: a })) + 'G', a],
      ['/v1/submit + garbage', 'relay', post('/v1/submit', JSON.stringify({ transaction: b })) + 'xyzzy', b],
      ['sendTransaction + G', 'rpc', rpc('sendTransaction', [c, { encoding: 'base64', skipPreflight: true }]) + 'G', c],
      ['getHealth + G', 'rpc', rpc('getHealth', []) + 'G', ''],
      ['getHealth + garbage', 'rpc', rpc('getHealth', []) + 'xyzzy', ''],
      ['GET /health + G', 'relay', HEALTH + 'G', ''],
    ];
  };
  for (const build of BUILDS) {
    const test = build === 'maintained' ? it.concurrent.fails : it.concurrent;
    test(`${build}: bytes in the same write as an answered request (submit, sendTransaction, getHealth; a G or garbage) are closed within the slow-client bound of that write${build === 'maintained' ? ' (KNOWN OPEN on the maintained prebuilt build only: held http.idleTimeoutSeconds; our source build fixes it with patch 0009)' : ''}`, { timeout: 40_000 }, async () => {
      const relay = relays.get(build)!;
      const cases = sameWriteCases();
      const outcomes = await Promise.all(cases.map(([kind, host, bytes]) => sameWriteTail(host === 'relay' ? relay.relayUrl : relay.rpcUrl, kind, bytes, BOUND_MS + 500)));
      // The client saw its answer (our build), or the legacy parser refused the garbage at once (505, closed, the
      // submission not sent: docs/http-runtime.md); either way a transaction went out if and only if its submission was answered.
      const wrong = outcomes.flatMap((o, i) => {
        const t = cases[i]![3];
        const sends = t === '' ? 0 : up.sent().filter((x) => x.toString('base64') === t).length;
        const answered = o.answers[0] === 200;
        const refusedAtOnce = build === 'legacy' && o.answers[0] === 505 && (o.closedAfterMs ?? Infinity) < 2_000;
        if (!answered && !refusedAtOnce) return [`${o.kind}: not answered: ${JSON.stringify(o.later.slice(0, 60))}`];
        // (the rpc route rebroadcasts until the blockhash expires: "sent" counts every copy)
        if (t !== '' && (sends > 0) !== answered) return [`${o.kind}: answered ${o.answers[0]}, sent ${sends} times`];
        return [];
      });
      const late = outcomes.filter((o) => o.closedAfterMs === undefined || o.closedAfterMs > BOUND_MS).map((o) => `${o.kind}: ${o.closedAfterMs ?? 'still open'} ms`);
      if (late.length > 0) wrong.push(`connections held past the slow-client bound: ${late.join('; ')}`);
      if (wrong.length > 0) throw new Error(wrong.join('; '));
    });
  }

  for (const build of BUILDS) {
    // Concurrent with the body test above: one wait for uWS's timers instead of three.
    const test = build === 'maintained' ? it.concurrent.fails : it.concurrent;
    test(`${build}: a request line, headers or garbage dribbled after an answer are closed within the slow-client bound${build === 'maintained' ? ' (KNOWN OPEN on the maintained prebuilt build only, issue #30 item 9: held http.idleTimeoutSeconds, 60 s; our source build fixes it with patch 0002)' : ''}`, { timeout: 40_000 }, async () => {
      const late = await held(relays.get(build)!, lineCases);
      if (late.length > 0) throw new Error(`connections held past the slow-client bound: ${late.join('; ')}`);
    });
  }
});
