// Interop: our QUIC client against quinn-tpu-sink, an independent quinn + rustls TPU-like server (the QUIC stack
// family Agave uses). Proves handshake, certificate, SNI, ALPN, stream and FIN handling against another stack.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  QuicClientConnection,
  base58Decode,
  createRandomIdentityCertificate,
  quicServerName,
} from '../../../src/quic/index.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { buildQuinnSink, QuinnSink } from '../../helpers/quinn-sink.js';
import { TpuSender } from '../../helpers/tpu-sender.js';

const build = buildQuinnSink();

describe.skipIf(build.binary === null)(`quinn-tpu-sink interop${build.skipReason ? ` (SKIPPED: ${build.skipReason})` : ''}`, () => {
  let sink: QuinnSink;

  beforeAll(async () => {
    sink = await QuinnSink.start(build, '127.0.0.1:0');
  });
  afterAll(() => {
    sink?.kill();
  });

  it('receives 10,000 transactions with --max-uni 128: unfinished=0 rejected=0, client_key = our identity', async () => {
    const cert = await createRandomIdentityCertificate();
    // Through the relay's egress connection worker: its queue holds what waits for the sink's stream credit.
    const client = await TpuSender.connect({ host: '127.0.0.1', port: sink.port, identity: cert });
    const conn = await sink.waitLine((l) => l.startsWith('CONN '), 5_000);
    expect(conn).toContain('alpn=solana-tpu');
    expect(conn).toContain('client_certs=1');
    expect(conn.split('client_key=')[1]).toBe(Buffer.from(base58Decode(cert.identity)).toString('hex'));

    const base = legacyTransfer(7).bytes;
    const N = 10_000;
    const txs = Array.from({ length: N }, (_, i) => {
      const tx = Buffer.from(base);
      tx.writeUInt32LE(i, tx.length - 4);
      return tx;
    });
    expect(new Set(await client.sendAll(txs))).toEqual(new Set(['sent']));
    const stats = await sink.waitLine((l) => l.startsWith('STATS ') && l.includes(` tx=${N} `), 15_000);
    expect(stats).toMatch(new RegExp(`conns=1 tx=${N} unfinished=0 rejected=0 bytes=${N * base.length}$`));
    expect(client.stats()).toMatchObject({ transactionsWritten: N, errors: 0, state: 'established' });
    await client.close();
  });

  it('IPv6: our SNI (the address as one DNS label) is accepted by rustls; Agave\'s "::1.port.sol" is refused (306)', async () => {
    const sink6 = await QuinnSink.start(build, '[::1]:0');
    try {
      const port6 = sink6.port;
      const out = sink6.lines;
      expect(quicServerName('::1', port6)).toBe(`0000-0000-0000-0000-0000-0000-0000-0001.${port6}.sol`);
      const identity = await createRandomIdentityCertificate();
      const ok = await QuicClientConnection.connect({ host: '::1', port: port6, identity });
      expect(ok.tryWrite(legacyTransfer(9).bytes)).toBe('written');
      const deadline = Date.now() + 5_000;
      while (!out.some((l) => l.startsWith('STATS ') && l.includes(' tx=1 ')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(out.some((l) => l.startsWith('STATS ') && l.includes(' tx=1 '))).toBe(true);
      ok.close();
      const refused = await QuicClientConnection.connect({ host: '::1', port: port6, identity, serverName: `::1.${port6}.sol` }).then(
        () => null,
        (e: Error & { closeInfo: { code: number } }) => e.closeInfo,
      );
      expect(refused?.code).toBe(306);
    } finally {
      sink6.kill();
    }
  });
});

describe('quicServerName', () => {
  it('IPv4 as Agave sends it; IPv6 as one DNS-safe label (expanded, zone dropped, IPv4 tail converted)', () => {
    expect(quicServerName('10.0.0.1', 8009)).toBe('10.0.0.1.8009.sol');
    expect(quicServerName('2001:db8::1', 8009)).toBe('2001-0db8-0000-0000-0000-0000-0000-0001.8009.sol');
    expect(quicServerName('fe80::a%eth0', 1)).toBe('fe80-0000-0000-0000-0000-0000-0000-000a.1.sol');
    expect(quicServerName('::ffff:10.0.0.1', 2)).toBe('0000-0000-0000-0000-0000-ffff-0a00-0001.2.sol');
    expect(quicServerName('1:2:3:4:5:6:7:8', 3)).toBe('0001-0002-0003-0004-0005-0006-0007-0008.3.sol');
    expect(quicServerName('::', 4)).toBe('0000-0000-0000-0000-0000-0000-0000-0000.4.sol');
  });
});
