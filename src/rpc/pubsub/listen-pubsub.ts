// Listening for the JSON-RPC host and its PubSub port together (front thread; cold, at start). PubSub goes where
// web3.js's Connection looks for it, rpc port + 1, unless jsonRpc.pubsub.port says otherwise. With rpcHost.port 0
// (tests, ephemeral set-ups) an ephemeral rpc port P is taken such that P + 1 is free too, trying a few pairs.
import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { listenExclusive } from '../../native/listen-exclusive.js';
import { BIND_FAILED, ListenFailure } from '../../native/listen-failure.js';
import type { Uws } from '../../native/uws.js';

/** Pairs (P, P + 1) tried when the rpc port is ephemeral and P + 1 turns out to be taken. */
const PORT_PAIR_ATTEMPTS = 20;

export interface ListeningPair {
  readonly rpc: us_listen_socket;
  readonly rpcPort: number;
  readonly pubsub: us_listen_socket;
  readonly pubsubPort: number;
}

function listenOn(app: TemplatedApp, host: string, port: number): Promise<us_listen_socket | null> {
  return new Promise((resolve) => listenExclusive(app, host, port, (s) => resolve(s || null)));
}

export async function listenRpcAndPubsub(
  uws: Uws,
  rpcApp: TemplatedApp,
  pubsubApp: TemplatedApp,
  host: string,
  rpcPort: number,
  pubsubPort: number | undefined,
): Promise<ListeningPair> {
  const attempts = rpcPort === 0 && pubsubPort === undefined ? PORT_PAIR_ATTEMPTS : 1;
  for (let i = 0; i < attempts; i++) {
    const rpc = await listenOn(rpcApp, host, rpcPort);
    if (rpc === null) throw new ListenFailure({ kind: 'rpc', field: 'rpcHost.port', proto: 'tcp', host, port: rpcPort }, BIND_FAILED);
    const p = uws.getSocketPort(rpc);
    const wanted = pubsubPort ?? p + 1;
    const pubsub = wanted <= 65_535 ? await listenOn(pubsubApp, host, wanted) : null;
    if (pubsub !== null) return { rpc, rpcPort: p, pubsub, pubsubPort: uws.getSocketPort(pubsub) };
    uws.closeSocket(rpc);
    if (attempts === 1) {
      const field = pubsubPort === undefined ? 'jsonRpc.pubsub.port (default rpcHost.port + 1)' : 'jsonRpc.pubsub.port';
      throw new ListenFailure({ kind: 'pubsub', field, proto: 'tcp', host, port: wanted }, BIND_FAILED);
    }
  }
  throw new Error(`no free pair of ports (P, P + 1) found on ${host} for the rpc host and its PubSub`);
}
