// Identity hot-swap through the real relay, without a restart: the keypair file identity.keypairPath names is
// replaced (written elsewhere, renamed over it, as an operator or a failover script would), the QUIC thread (the one
// holder of QUIC connections, with rings.workers 2) notices within identity.reloadCheckMs, logs identity_changed once,
// cycles its connections, and a localnet TPU listener
// standing in for a static peer then sees the new identity on the next transactions.
import { Keypair } from '@solana/web3.js';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TpuListener } from '../../../src/localnet/tpu-listener.js';
import { startRelay, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDist } from './dist-build.js';
import { submitStatic } from '../../helpers/submit-static.js';
import { until } from '../../helpers/wait-for.js';

const first = Keypair.generate();
const second = Keypair.generate();
const WORKERS = 2;
let dir: string;
let keypairPath: string;
let peer: TpuListener;
const senderOf = new Map<string, string | null>();
let relay: RelayHandle;

beforeAll(async () => {
  ensureDist();
  peer = new TpuListener({
    host: '127.0.0.1',
    port: 0,
    validatorIdentity: 'peer',
    onTransaction: (tx, info) => void senderOf.set(Buffer.from(tx).toString('base64'), info.senderIdentity),
  });
  await peer.start();
  dir = mkdtempSync(join(tmpdir(), 'slotrelay-identity-'));
  keypairPath = join(dir, 'relay.json');
  writeFileSync(keypairPath, JSON.stringify(Array.from(first.secretKey)));
  relay = await startRelay({
    upstream: { rpcUrl: 'http://127.0.0.1:9' },
    identity: { keypairPath, reloadCheckMs: 100 },
    rings: { workers: WORKERS, slotsPerRing: 256 },
    routes: { direct: { evictionGraceMs: 200 }, static: { peers: [`127.0.0.1:${peer.address().port}`] } },
  });
}, 60_000);

afterAll(async () => {
  await relay?.stop();
  await peer?.stop();
});

describe('identity hot-swap', () => {
  it('a replaced keypair file becomes the identity of the next connections, without a restart', async () => {
    const before = await submitStatic(relay.relayUrl, 10, 9_000);
    await until(() => before.every((b) => senderOf.has(b)), 5_000);
    expect(new Set(before.map((b) => senderOf.get(b)))).toEqual(new Set([first.publicKey.toBase58()]));

    const tmp = join(dir, 'relay.json.new');
    writeFileSync(tmp, JSON.stringify(Array.from(second.secretKey)));
    renameSync(tmp, keypairPath);
    const changed = () => relay.logs.filter((l) => l.includes('"event":"identity_changed"') && l.includes(second.publicKey.toBase58()));
    // One line: the QUIC thread holds every QUIC connection, whatever rings.workers is.
    await until(() => changed().length === 1, 5_000);
    expect(JSON.parse(changed()[0])).toMatchObject({ from: first.publicKey.toBase58(), identity: second.publicKey.toBase58() });

    const after = await submitStatic(relay.relayUrl, 10, 9_100);
    await until(() => after.every((b) => senderOf.has(b)), 5_000);
    expect(new Set(after.map((b) => senderOf.get(b)))).toEqual(new Set([second.publicKey.toBase58()]));
    // The old connection was closed, not left open next to the new one.
    await until(() => peer.counters.activeConnections === 1, 5_000);

    // A file that is not a keypair keeps the current identity (logged), and sending goes on.
    writeFileSync(tmp, 'not a keypair');
    renameSync(tmp, keypairPath);
    await until(() => relay.logs.some((l) => l.includes('identity reload failed')), 5_000);
    const still = await submitStatic(relay.relayUrl, 3, 9_200);
    await until(() => still.every((b) => senderOf.has(b)), 5_000);
    expect(new Set(still.map((b) => senderOf.get(b)))).toEqual(new Set([second.publicKey.toBase58()]));
  });
});
