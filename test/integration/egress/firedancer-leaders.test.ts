// Leaders of both kinds through the real relay (docs/tpu-quic.md "Leaders of both kinds"): a localnet whose validator 0
// runs Firedancer's TPU (a stateless Retry on every new connection) and validator 1 Agave's. The relay's egress
// pre-warms both leaders, learns each one's kind from its handshake (/metrics by kind) and from getClusterNodes'
// version (its log), and a transaction sent in the Firedancer leader's slots still lands there.
import { Connection, Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDist } from './dist-build.js';
import { until } from '../../helpers/wait-for.js';
import { signedTransfer } from '../../helpers/transactions.js';
import { metricNow } from '../../helpers/metrics-text.js';

const SLOT_MS = 200;
let ln: Localnet;
let conn: Connection;
let relay: RelayHandle;
const payer = Keypair.generate();

beforeAll(async () => {
  ensureDist();
  ln = await startLocalnet({ slotMs: SLOT_MS, validators: 2, kinds: ['firedancer', 'agave'], stakes: [100_000_000_000n, 100_000_000_000n], graceMs: SLOT_MS / 2 });
  conn = new Connection(ln.rpcUrl, 'confirmed');
  await conn.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
  relay = await startRelay({
    upstream: { rpcUrl: ln.rpcUrl },
    routes: { direct: { enabled: true, fanout: 'window-aware', leaders: 1, lookahead: 4, slotPollMs: 50 } },
  });
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  await ln?.stop();
});

describe('Firedancer and Agave leaders through the relay', () => {
  it('learns each leader kind from its handshake (/metrics) and from getClusterNodes (log)', async () => {
    await until(async () => (await metricNow(relay.rpcUrl, 'slotrelay_quic_connections_by_leader_kind', 'kind="firedancer"')) === 1, 15_000);
    await until(async () => (await metricNow(relay.rpcUrl, 'slotrelay_quic_connections_by_leader_kind', 'kind="agave"')) === 1, 15_000);
    // Every connection the Firedancer listener accepted met a Retry first (the telemetry's handshake probes get one
    // too, and may close before being accepted); the Agave listener sent none.
    expect(ln.listeners[0].counters.connections).toBeGreaterThanOrEqual(1);
    expect(ln.listeners[0].counters.retriesSent).toBeGreaterThanOrEqual(ln.listeners[0].counters.connections);
    expect(ln.listeners[1].counters.retriesSent).toBe(0);
    await until(() => relay.logs.some((l) => l.includes('"cluster_leader_kinds"')), 10_000);
    const line = JSON.parse(relay.logs.find((l) => l.includes('"cluster_leader_kinds"'))!) as Record<string, unknown>;
    expect(line).toMatchObject({ agave: 1, firedancer: 1, unknown: 0 });
  }, 30_000);

  it('a transaction sent in the Firedancer leader\'s slots lands there', async () => {
    const fd = ln.validators[0].identity;
    for (let attempt = 0; attempt < 5; attempt++) {
      const tx = await signedTransfer(conn, payer);
      // Wait for the first slot of a Firedancer window.
      await until(() => ln.clock.current % 4 === 0 && ln.schedule.leaderAt(ln.clock.current) === fd, 20_000, 2);
      const r = await fetch(`${relay.relayUrl}/v1/submit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
        body: JSON.stringify({ transaction: tx.base64, routes: ['direct'] }),
      });
      expect(r.status).toBe(200);
      await until(() => ln.bank.record(tx.signature) !== undefined, 5_000);
      const rec = ln.landings.page(0, 10_000).records.find((x) => x.signature === tx.signature)!;
      if (rec.validator === fd) return;
    }
    throw new Error('no transaction landed with the Firedancer leader in 5 tries');
  }, 60_000);
});
