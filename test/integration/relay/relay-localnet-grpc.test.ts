// `make start` on gRPC: one config line, `localnet: { grpcPort: 0 }`, and the relay's embedded localnet serves
// Yellowstone gRPC and the relay takes its slots from it (a relay process, as `make start` runs it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';

let relay: RelayHandle;

beforeAll(async () => {
  relay = await startRelay({ localnet: { grpcPort: 0, slotMs: 200 } });
});

afterAll(async () => {
  await relay?.stop();
});

describe('the embedded localnet with localnet.grpcPort', () => {
  it('serves Yellowstone gRPC and the relay leads with it', async () => {
    const started = relay.logs.map((l) => (l.includes('"localnet_started"') ? (JSON.parse(l) as { grpcUrl?: string | null }) : null)).find((x) => x !== null);
    expect(started?.grpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    type Health = { slotSource: { active: string; grpc: { state: string } | null } | null; leaderData: { fresh: boolean } };
    const h = await waitFor('grpc active', async () => (await (await fetch(`${relay.rpcUrl}/health?detail`)).json()) as Health, (x) => x.slotSource?.active === 'grpc' && x.leaderData.fresh, 20_000);
    expect(h.slotSource!.grpc!.state).toBe('up');
  });
});
