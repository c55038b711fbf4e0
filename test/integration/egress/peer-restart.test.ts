// A static peer whose process is killed outright (no CONNECTION_CLOSE) and restarted on the same port: the relay's
// QUIC connection to it would sit "active" until the 60 s idle timeout, every transaction for it going stale. After
// a stale drop the connection worker PINGs the peer; no answer within 1 s closes the connection and it reconnects,
// so transactions reach the restarted peer within seconds. The peer is the soak run's stand-in (its own process).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';
import { ensureDist } from './dist-build.js';

interface Peer {
  readonly child: ChildProcess;
  readonly port: number;
  received(): number;
}

function startPeer(port: number): Promise<Peer> {
  const child = spawn(process.execPath, ['dist/scripts/soak/stand-in.js', '--kind', 'static', '--port', String(port)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let received = 0;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the peer did not start')), 20_000);
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const m = JSON.parse(l) as { event: string; port?: number; received?: number };
      if (m.event === 'stand_in_stats') received = m.received ?? received;
      if (m.event === 'stand_in_ready') {
        clearTimeout(timer);
        resolve({ child, port: m.port!, received: () => received });
      }
    });
  });
}

let relay: RelayHandle | undefined;
let upstream: FakeRpcUpstream | undefined;
const peers: Peer[] = [];
afterAll(async () => {
  await relay?.stop();
  await upstream?.close();
  for (const p of peers) p.child.kill('SIGKILL');
});

async function submitStatic(): Promise<number> {
  const res = await fetch(`${relay!.relayUrl}/v1/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ transaction: legacyTransfer().base64, routes: ['static'], maxRetries: 0 }),
  });
  await res.body?.cancel();
  return res.status;
}

describe('a static peer killed and restarted on the same port', () => {
  it('is reached again within seconds (PING after a stale drop, reconnect), not after the 60 s idle timeout', async () => {
    ensureDist();
    const first = await startPeer(0);
    peers.push(first);
    upstream = await startFakeRpcUpstream();
    relay = await startRelay({
      upstream: { rpcUrl: upstream.url },
      routes: { rpc: { endpoints: [upstream.url] }, direct: { staleAfterMs: 300 }, static: { peers: [`127.0.0.1:${first.port}`], everyTransaction: false } },
      health: { failingMinOutcomes: 1_000_000 }, // this test is about the connection, not intake refusals
      // Nor admission by delay's: with the peer dead, static's accepted transactions wait and the route goes over its
      // target sojourn (503 queue_delay: tested in relay/delay-admission.test.ts).
      admission: { targetSojournMs: { static: 0 } },
    });
    expect(await submitStatic()).toBe(200);
    await waitFor('the first peer got it', () => first.received() >= 1, undefined, 10_000);

    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    const second = await startPeer(first.port);
    peers.push(second);
    const restartedAt = Date.now();
    // Keep sending: the first ones go stale on the dead connection, the PING gets no answer, the worker reconnects.
    while (second.received() === 0) {
      if (Date.now() - restartedAt > 15_000) throw new Error('the restarted peer received nothing within 15 s');
      expect(await submitStatic()).toBe(200);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(Date.now() - restartedAt).toBeLessThan(15_000);
    expect(relay.logs.some((l) => l.includes('peer does not answer a PING'))).toBe(true);
  }, 60_000);
});
