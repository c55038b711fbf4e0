// Back-pressure by stream credit on the QUIC ingress (issue #28, docs/quic-ingress.md "Back-pressure"): with a tiny
// queue between the QUIC thread and the front (relayHost.quic.queueSlots 8), a burst of many more streams than that
// from our client (src/client/quic/ingress-client.ts) on one connection all end accepted, none refused `overloaded`:
// while the queue is full the relay leaves the connection's streams unread, so their stream credit is not returned and
// the client waits for it. Counted by the relay's own /metrics (holds, held streams). Before the change the QUIC thread
// read the burst faster than the front drained 8 slots and refused the rest `overloaded` (STOP_SENDING 21 on a uni
// stream, which the client does not see; an `overloaded` answer on a bidi one). Real relay process, real QUIC on
// loopback. The hold's bound (a front that never drains) is tested in-process: test/unit/ingress/hold-timeout.test.ts.
import { Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngressClient, type StreamResult } from '../../../src/client/quic/ingress-client.js';
import { createIdentityCertificate, type IdentityCertificate } from '../../../src/quic/identity-certificate.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { scrape, sampleValue } from '../../helpers/metrics-text.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';

const QUEUE_SLOTS = 8;
const UNI_BURST = 500;
const BIDI_BURST = 200;

let relay: RelayHandle;
let cert: IdentityCertificate;
let port: number;

beforeAll(async () => {
  relay = await startRelay({
    relayHost: { host: '127.0.0.1', port: 0, quicPort: -1, quic: { queueSlots: QUEUE_SLOTS } },
    routes: { discard: true },
    rings: { workers: 1, slotsPerRing: 4096 },
    keys: [{ key: TEST_KEY, name: 'test-bot', rateLimit: { perSecond: 1_000_000, burst: 1_000_000 } }],
  });
  port = relay.quic!.port;
  cert = await createIdentityCertificate(Keypair.generate().secretKey, TEST_KEY);
}, 60_000);

afterAll(async () => {
  await relay?.stop();
});

interface Figures {
  readonly accepted: number;
  readonly overloaded: number;
  readonly holds: number;
  readonly held: number;
  readonly holdTimeouts: number;
}

async function figures(): Promise<Figures> {
  const text = await scrape(relay.rpcUrl);
  const streams = (outcome: string): number => sampleValue(text, 'slotrelay_quic_ingress_streams_total', `outcome="${outcome}"`) ?? NaN;
  return {
    accepted: streams('accepted'),
    overloaded: streams('overloaded'),
    holds: sampleValue(text, 'slotrelay_quic_ingress_holds_total') ?? NaN,
    held: sampleValue(text, 'slotrelay_quic_ingress_streams_held_total') ?? NaN,
    holdTimeouts: sampleValue(text, 'slotrelay_quic_ingress_hold_timeouts_total') ?? NaN,
  };
}

describe(`QUIC ingress back-pressure: a burst far beyond a ${QUEUE_SLOTS}-slot front queue waits for stream credit instead of being refused`, () => {
  it(`${UNI_BURST} uni streams at once on one connection: all accepted, none overloaded, the connection held`, async () => {
    const c = await IngressClient.connect({ host: '127.0.0.1', port, certificate: cert });
    try {
      // Distinct transactions (the relay does not deduplicate, but a sink would), signed before the clock starts.
      const txs = Array.from({ length: UNI_BURST }, () => legacyTransfer().bytes);
      const before = await figures();
      const t0 = performance.now();
      // All queued at once: the client writes them as stream credit comes.
      const written = await Promise.all(txs.map((tx) => c.sendUni(tx)));
      for (const r of written) expect(r).toEqual({ kind: 'written' });
      // Every stream ends counted: accepted, or (before the change) overloaded. Waits for the sum, then compares.
      const after = await waitFor(
        `${UNI_BURST} streams counted accepted or overloaded`,
        figures,
        (f) => f.accepted + f.overloaded - before.accepted - before.overloaded >= UNI_BURST,
        20_000,
      );
      const ms = performance.now() - t0;
      console.log(
        `uni: ${UNI_BURST} streams in ${ms.toFixed(0)} ms; accepted ${after.accepted - before.accepted}, overloaded ${after.overloaded - before.overloaded}, ` +
          `holds ${after.holds - before.holds}, streams held ${after.held - before.held}, hold timeouts ${after.holdTimeouts - before.holdTimeouts}`,
      );
      expect(after.overloaded - before.overloaded, 'streams refused overloaded').toBe(0);
      expect(after.accepted - before.accepted).toBe(UNI_BURST);
      expect(after.holds - before.holds, 'the connection was held at least once').toBeGreaterThan(0);
      expect(after.held - before.held, 'streams waited unread').toBeGreaterThan(0);
      expect(after.holdTimeouts - before.holdTimeouts).toBe(0);
    } finally {
      c.close();
    }
  }, 60_000);

  it(`${BIDI_BURST} bidi requests at once: every answer accepted (no overloaded answer)`, async () => {
    const c = await IngressClient.connect({ host: '127.0.0.1', port, certificate: cert });
    try {
      const before = await figures();
      const txs = Array.from({ length: BIDI_BURST }, () => legacyTransfer());
      const answers: StreamResult[] = await Promise.all(txs.map((tx) => c.request({ transaction: tx.bytes })));
      const after = await figures();
      const refused = answers.filter((a) => a.kind !== 'answer' || a.answer.accepted !== true);
      console.log(`bidi: ${BIDI_BURST} requests; not accepted ${refused.length}, holds ${after.holds - before.holds}, streams held ${after.held - before.held}`);
      expect(refused.slice(0, 3), `${refused.length} of ${BIDI_BURST} not accepted`).toEqual([]);
      answers.forEach((a, i) => expect(a).toMatchObject({ kind: 'answer', answer: { accepted: true, signature: txs[i].signature } }));
      expect(after.overloaded - before.overloaded).toBe(0);
    } finally {
      c.close();
    }
  }, 60_000);
});
