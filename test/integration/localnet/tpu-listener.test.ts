import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keypair } from '@solana/web3.js';
import { TpuListener, type TpuTransactionInfo } from '../../../src/localnet/tpu-listener.js';
import { QuicClientConnection, createIdentityCertificate, TPU_CLOSE_CODE } from '../../../src/quic/index.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { until } from '../../helpers/wait-for.js';

describe('localnet TPU listener', () => {
  const validator = Keypair.generate().publicKey.toBase58();
  const got: { tx: Uint8Array; info: TpuTransactionInfo; deliveredNs: bigint }[] = [];
  let listener: TpuListener;

  beforeAll(async () => {
    listener = new TpuListener({
      host: '127.0.0.1',
      port: 0,
      validatorIdentity: validator,
      maxStreams: 128,
      maxTransactionBytes: 1232,
      oneWayDelayMs: 30,
      onTransaction: (tx, info) => got.push({ tx, info, deliveredNs: process.hrtime.bigint() }),
    });
    await listener.start();
  });
  afterAll(async () => {
    await listener.stop();
  });

  it('delivers each transaction (a keepable copy) with validator and sender identity, one path delay after the send', async () => {
    const sender = Keypair.generate();
    const identity = await createIdentityCertificate(sender.secretKey);
    const connectStart = process.hrtime.bigint();
    const c = await QuicClientConnection.connect({ host: '127.0.0.1', port: listener.address().port, identity });
    // The handshake crosses the path twice (Initial in, server flight out): at least 2 x 30 ms.
    expect(process.hrtime.bigint() - connectStart).toBeGreaterThanOrEqual(59_000_000n);
    const txs = [legacyTransfer(1).bytes, legacyTransfer(2).bytes, legacyTransfer(3).bytes];
    const sentNs = process.hrtime.bigint();
    for (const tx of txs) expect(c.tryWrite(tx)).toBe('written');
    await until(() => got.length === 3);
    expect(got.map((g) => Buffer.from(g.tx).toString('hex')).sort()).toEqual(txs.map((t) => t.toString('hex')).sort());
    for (const g of got) {
      expect(g.info.validatorIdentity).toBe(validator);
      expect(g.info.senderIdentity).toBe(sender.publicKey.toBase58());
      // Arrival is stamped when the delayed datagram is processed: one way = 30 ms after the send, delivered at once.
      expect(g.info.arrivalNs - sentNs).toBeGreaterThanOrEqual(29_000_000n);
      expect(g.deliveredNs).toBeGreaterThanOrEqual(g.info.arrivalNs);
    }
    // Copies: distinct buffers that later traffic does not overwrite.
    expect(new Set(got.map((g) => g.tx.buffer)).size).toBe(3);
    expect(listener.counters).toMatchObject({ connections: 1, transactions: 3, invalidStreams: 0 });
    c.close();
  });

  it('counts invalid streams and rejected connections', async () => {
    const c = await QuicClientConnection.connect({
      host: '127.0.0.1',
      port: listener.address().port,
      identity: await createIdentityCertificate(Keypair.generate().secretKey),
      maxTransactionBytes: 4096,
    });
    expect(c.tryWrite(new Uint8Array(2000).fill(9))).toBe('written');
    expect((await c.closed).code).toBe(TPU_CLOSE_CODE.invalidStream);
    await QuicClientConnection.connect({ host: '127.0.0.1', port: listener.address().port, identity: null })
      .then((x) => x.closed)
      .catch(() => undefined);
    await until(() => listener.counters.rejectedConnections >= 1);
    expect(listener.counters.invalidStreams).toBe(1);
  });
});
