// The relay config's localnet: section reaches the embedded localnet the real relay starts (dist/src/cli.js start
// -> localnet child with --bench-json): its slot time, validator count and RPC node delay, measured over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedLocalnetUrl } from '../../helpers/embedded-localnet.js';
import { startRelay, type RelayHandle } from '../../helpers/relay-process.js';

let relay: RelayHandle;
let localnetUrl: string;
const RPC_DELAY_MS = 50;

async function call(method: string, params: unknown[] = []): Promise<{ ms: number; result: unknown }> {
  const t0 = performance.now();
  const res = await fetch(localnetUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await res.json()) as { result: unknown };
  return { ms: performance.now() - t0, result: body.result };
}

beforeAll(async () => {
  relay = await startRelay({ localnet: { slotMs: 200, validators: 3, links: [{}, {}, { down: true }], rpc: { oneWayDelayMs: RPC_DELAY_MS } } });
  localnetUrl = embeddedLocalnetUrl(relay);
}, 60_000);

afterAll(async () => {
  await relay?.stop();
});

describe('relay config localnet: section', () => {
  it('sets the embedded localnet slot time, validators and RPC delay', async () => {
    const nodes = (await call('getClusterNodes')).result as unknown[];
    expect(nodes).toHaveLength(3);
    const t0 = performance.now();
    const s0 = (await call('getSlot', [{ commitment: 'processed' }])).result as number;
    await new Promise((r) => setTimeout(r, 1_600));
    const t1 = performance.now();
    const s1 = (await call('getSlot', [{ commitment: 'processed' }])).result as number;
    expect(Math.abs(s1 - s0 - (t1 - t0) / 200)).toBeLessThanOrEqual(1.5);
    const rtts: number[] = [];
    for (let i = 0; i < 3; i++) rtts.push((await call('getHealth')).ms);
    expect(Math.min(...rtts)).toBeGreaterThanOrEqual(2 * RPC_DELAY_MS - 1);
  });
});
