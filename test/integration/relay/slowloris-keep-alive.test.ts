// Slow clients on a kept-alive connection (issue #30 item 9): after one answered request, a request line, headers,
// a body or garbage dribbled one byte a second on the SAME socket is closed within the slow-client bound of issue #15
// (8-12 s, docs/http-runtime.md), not held for http.idleTimeoutSeconds (60 here); likewise a connection whose request
// was answered early (404, 401) while its body is still arriving. Raw sockets, every loadable uWS build side by side.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { loadableUwsBuilds } from '../../helpers/raw-http.js';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { startRelays, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';

/** The bound measured from the dribble's first byte: uWS's 10 s timer swept every 4 s, plus a loaded box's margin. */
const BOUND_MS = 14_500;

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

const BUILDS = loadableUwsBuilds();
const HEALTH = 'GET /health HTTP/1.1\r\nhost: relay\r\n\r\n';

describe('slow clients on a kept-alive connection (http.idleTimeoutSeconds: 60), every loadable uWS build at once', () => {
  let up: FakeRpcUpstream;
  const relays = new Map<string, RelayHandle>();
  // The relays start (and stop) side by side too.
  beforeAll(async () => {
    up = await startFakeRpcUpstream();
    const config = { upstream: { rpcUrl: up.url }, routes: { rpc: { endpoints: [up.url] } }, http: { idleTimeoutSeconds: 60 } };
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
      expect(up.sent().length).toBe(0);
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
  for (const build of BUILDS) {
    // Concurrent with the body test above: one wait for uWS's timers instead of three.
    const test = build === 'maintained' ? it.concurrent.fails : it.concurrent;
    test(`${build}: a request line, headers or garbage dribbled after an answer are closed within the slow-client bound${build === 'maintained' ? ' (KNOWN OPEN on the maintained prebuilt build only, issue #30 item 9: held http.idleTimeoutSeconds, 60 s; our source build fixes it with patch 0002)' : ''}`, { timeout: 40_000 }, async () => {
      const late = await held(relays.get(build)!, lineCases);
      if (late.length > 0) throw new Error(`connections held past the slow-client bound: ${late.join('; ')}`);
    });
  }
});
