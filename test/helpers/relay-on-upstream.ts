// The set-up most relay tests share: a fake upstream (test/helpers/fake-upstream.ts) that is both the
// relay's upstream RPC and its rpc route, and a relay process on it, started before the file's tests and stopped
// after them.
import { afterAll, beforeAll } from 'vitest';
import { startFakeRpcUpstream, type FakeRpcUpstream } from './fake-upstream.js';
import { startRelay, type RelayHandle } from './relay-process.js';

export interface RelayOnUpstream {
  /** Valid inside tests (set in beforeAll). */
  readonly relay: RelayHandle;
  readonly upstream: FakeRpcUpstream;
}

/** Registers beforeAll/afterAll; `config` is merged over the upstream and rpc route settings. */
export function relayOnFakeRpcUpstream(config: Record<string, unknown> = {}): RelayOnUpstream {
  let relay: RelayHandle | undefined;
  let upstream: FakeRpcUpstream | undefined;
  beforeAll(async () => {
    upstream = await startFakeRpcUpstream();
    relay = await startRelay({ upstream: { rpcUrl: upstream.url }, routes: { rpc: { endpoints: [upstream.url] } }, ...config });
  });
  afterAll(async () => {
    await relay?.stop();
    await upstream?.close();
  });
  return {
    get relay(): RelayHandle {
      if (relay === undefined) throw new Error('the relay is not started yet (use it inside a test)');
      return relay;
    },
    get upstream(): FakeRpcUpstream {
      if (upstream === undefined) throw new Error('the upstream is not started yet (use it inside a test)');
      return upstream;
    },
  };
}
