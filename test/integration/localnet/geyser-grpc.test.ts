// The localnet's Yellowstone gRPC server (src/localnet/grpc/) driven by the unchanged official client,
// @triton-one/yellowstone-grpc (its NAPI binding, tonic underneath): every slot status in order, transactions and
// their statuses filtered as yellowstone-grpc filters them, blocks meta, a filter replaced on an open stream, a
// stream closed and opened again, ping/pong on the stream, the unary methods, and UNIMPLEMENTED for the rest.
import * as yellowstone from '@triton-one/yellowstone-grpc';
import { CommitmentLevel, SlotStatus, txErrDecode, type ClientDuplexStream, type SubscribeRequest, type SubscribeUpdate } from '@triton-one/yellowstone-grpc';
import { Connection, Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import bs58 from 'bs58';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { signedTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';

// The package's types read as CommonJS to TypeScript (the class at default.default) and its runtime is ESM to Node
// (the class at default).
type ClientClass = (typeof yellowstone)['default']['default'];
const Client = ((yellowstone.default as { default?: ClientClass }).default ?? yellowstone.default) as ClientClass;
type Client = InstanceType<ClientClass>;

const SLOT_MS = 100;
const CONFIRMED_DEPTH = 1;
const FINALIZED_DEPTH = 4;
let ln: Localnet;
let conn: Connection;
let client: Client;
const alice = Keypair.generate();
const bob = Keypair.generate();

/** A full request (the official client encodes what it is given; the real server reads absent maps as empty). */
function request(part: Partial<SubscribeRequest>): SubscribeRequest {
  return {
    accounts: {},
    slots: {},
    transactions: {},
    transactionsStatus: {},
    blocks: {},
    blocksMeta: {},
    entry: {},
    accountsDataSlice: [],
    ...part,
  };
}

interface Opened {
  readonly stream: ClientDuplexStream;
  readonly got: SubscribeUpdate[];
  readonly error: Promise<Error>;
}

/**
 * A stream on its own connection: the official client's destroy() stops reading without resetting the stream, and
 * h2 (>= 0.4.16) closes a connection whose unread small DATA frames exceed its budget (GOAWAY too_many_data_frames),
 * which would take the next test's stream down with it.
 */
async function open(req: SubscribeRequest): Promise<Opened> {
  const own = new Client(ln.grpcUrl!, undefined, undefined);
  await own.connect();
  const stream = await own.subscribe();
  const got: SubscribeUpdate[] = [];
  stream.on('data', (u: SubscribeUpdate) => got.push(u));
  const error = new Promise<Error>((resolve) => stream.on('error', resolve));
  await write(stream, req);
  return { stream, got, error };
}

function write(stream: ClientDuplexStream, req: SubscribeRequest): Promise<void> {
  return new Promise((resolve, reject) => stream.write(req, (err?: Error | null) => (err ? reject(err) : resolve())));
}

async function send(payer: Keypair, lamports: number): Promise<string> {
  const tx = await signedTransfer(conn, payer, lamports);
  return conn.sendRawTransaction(tx.bytes, { skipPreflight: true });
}

const sigOf = (u: SubscribeUpdate): string | undefined => {
  const b = u.transaction?.transaction?.signature ?? u.transactionStatus?.signature;
  return b === undefined ? undefined : bs58.encode(b);
};

beforeAll(async () => {
  // Tower: most of this file reads confirmed/finalized by depth; the Alpenglow mapping has its own block below.
  ln = await startLocalnet({ consensus: 'tower', slotMs: SLOT_MS, validators: 2, confirmedDepth: CONFIRMED_DEPTH, finalizedDepth: FINALIZED_DEPTH, grpcPort: 0 });
  conn = new Connection(ln.rpcUrl, 'confirmed');
  for (const k of [alice, bob]) {
    const sig = await conn.requestAirdrop(k.publicKey, 10 * LAMPORTS_PER_SOL);
    await waitFor('airdrop', () => conn.getSignatureStatus(sig).then((s) => s.value?.confirmationStatus));
  }
  client = new Client(ln.grpcUrl!, undefined, undefined);
  await client.connect();
});

afterAll(async () => {
  await ln?.stop();
});

describe('Subscribe: slots', () => {
  it('gives every status of a slot in order: first shred, created bank, completed, processed, confirmed, finalized', async () => {
    const s = await open(request({ slots: { all: { interslotUpdates: true } } }));
    const first = ln.clock.current + 2;
    await waitFor('a slot finalized', () => s.got.some((u) => Number(u.slot?.slot) === first && u.slot?.status === SlotStatus.SLOT_FINALIZED), Boolean, 10_000);
    s.stream.destroy();
    const statuses = s.got.filter((u) => Number(u.slot?.slot) === first).map((u) => u.slot!.status);
    expect(statuses).toEqual([
      SlotStatus.SLOT_FIRST_SHRED_RECEIVED,
      SlotStatus.SLOT_CREATED_BANK,
      SlotStatus.SLOT_COMPLETED,
      SlotStatus.SLOT_PROCESSED,
      SlotStatus.SLOT_CONFIRMED,
      SlotStatus.SLOT_FINALIZED,
    ]);
    const u = s.got.find((x) => Number(x.slot?.slot) === first)!;
    expect(u.filters).toEqual(['all']);
    expect(u.slot!.parent).toBe(String(first - 1));
  });

  it('without interslotUpdates gives processed, confirmed and finalized only; filterByCommitment only the commitment', async () => {
    const s = await open(
      request({ slots: { plain: {}, mine: { filterByCommitment: true } }, commitment: CommitmentLevel.CONFIRMED }),
    );
    await waitFor('ten slot updates', () => s.got.filter((u) => u.slot).length >= 10, Boolean, 10_000);
    s.stream.destroy();
    const slots = s.got.filter((u) => u.slot);
    for (const u of slots) expect([SlotStatus.SLOT_PROCESSED, SlotStatus.SLOT_CONFIRMED, SlotStatus.SLOT_FINALIZED]).toContain(u.slot!.status);
    for (const u of slots) expect(u.filters.includes('mine')).toBe(u.slot!.status === SlotStatus.SLOT_CONFIRMED);
    expect(slots.some((u) => u.filters.includes('plain') && !u.filters.includes('mine'))).toBe(true);
  });
});

describe('Subscribe: transactions, statuses, blocks meta', () => {
  it('filters by accountInclude, accountExclude, accountRequired, signature, failed and vote, naming the filters matched', async () => {
    const a = alice.publicKey.toBase58();
    const b = bob.publicKey.toBase58();
    const s = await open(
      request({
        transactions: {
          alice: { accountInclude: [a], accountExclude: [], accountRequired: [] },
          notAlice: { accountInclude: [], accountExclude: [a], accountRequired: [] },
          bothRequired: { accountInclude: [], accountExclude: [], accountRequired: [a, b] },
          failed: { failed: true, accountInclude: [], accountExclude: [], accountRequired: [] },
          votes: { vote: true, accountInclude: [], accountExclude: [], accountRequired: [] },
        },
        transactionsStatus: { status: { accountInclude: [a, b], accountExclude: [], accountRequired: [] } },
      }),
    );
    const okAlice = await send(alice, 1_000_000);
    const okBob = await send(bob, 1_000_000);
    const failedAlice = await send(alice, 1_000 * LAMPORTS_PER_SOL); // more than alice has: lands, fails (Custom 1)
    await waitFor('three statuses', () => new Set(s.got.filter((u) => u.transactionStatus).map(sigOf)).size >= 3, Boolean, 10_000);
    await waitFor('the transactions', () => s.got.filter((u) => u.transaction).length >= 3, Boolean, 10_000);
    const filtersBy = (sig: string): string[] => s.got.filter((u) => u.transaction && sigOf(u) === sig).flatMap((u) => u.filters).sort();
    expect(filtersBy(okAlice)).toEqual(['alice']);
    expect(filtersBy(okBob)).toEqual(['notAlice']);
    expect(filtersBy(failedAlice)).toEqual(['alice', 'failed']);
    expect(s.got.some((u) => u.filters.includes('votes') || u.filters.includes('bothRequired'))).toBe(false);

    const failed = s.got.find((u) => u.transactionStatus && sigOf(u) === failedAlice)!.transactionStatus!;
    expect(txErrDecode.decode(failed.err!.err)).toEqual({ InstructionError: [0, { Custom: 1 }] });
    const okStatus = s.got.find((u) => u.transactionStatus && sigOf(u) === okAlice)!.transactionStatus!;
    expect(okStatus.err).toBeUndefined();
    const rpcStatus = (await conn.getSignatureStatus(okAlice)).value!;
    expect(Number(okStatus.slot)).toBe(rpcStatus.slot);
    const tx = s.got.find((u) => u.transaction && sigOf(u) === okAlice)!.transaction!;
    expect(bs58.encode(tx.transaction!.transaction!.message!.accountKeys[0])).toBe(a);
    s.stream.destroy();
  });

  it('replaces the filters when the client writes a new request on the open stream', async () => {
    const s = await open(request({ transactions: { f: { accountInclude: [alice.publicKey.toBase58()], accountExclude: [], accountRequired: [] } } }));
    const first = await send(alice, 1_000_000);
    await waitFor('alice transaction', () => s.got.some((u) => sigOf(u) === first), Boolean, 10_000);
    const bobSig = await signedTransfer(conn, bob, 1_000_000);
    await write(s.stream, request({ transactions: { f: { signature: bobSig.signature, accountInclude: [], accountExclude: [], accountRequired: [] } } }));
    // The update is applied in order on the stream: a pong after it proves the server read it.
    await write(s.stream, request({ ping: { id: 41 } }));
    await waitFor('pong 41', () => s.got.some((u) => u.pong?.id === 41), Boolean, 5_000);
    const second = await send(alice, 1_000_000);
    await conn.sendRawTransaction(bobSig.bytes, { skipPreflight: true });
    await waitFor('bob transaction by signature', () => s.got.some((u) => sigOf(u) === bobSig.signature), Boolean, 10_000);
    await waitFor('alice landed', () => conn.getSignatureStatus(second).then((x) => x.value !== null));
    await new Promise((r) => setTimeout(r, 2 * SLOT_MS));
    expect(s.got.some((u) => sigOf(u) === second)).toBe(false);
    s.stream.destroy();
  });

  it('sends transactions at the stream commitment: confirmed arrives after its slot is confirmed', async () => {
    const s = await open(
      request({
        commitment: CommitmentLevel.CONFIRMED,
        slots: { s: {} },
        transactionsStatus: { t: { accountInclude: [alice.publicKey.toBase58()], accountExclude: [], accountRequired: [] } },
      }),
    );
    const sig = await send(alice, 1_000_000);
    await waitFor('confirmed status', () => s.got.some((u) => sigOf(u) === sig), Boolean, 10_000);
    const i = s.got.findIndex((u) => sigOf(u) === sig);
    const slot = s.got[i].transactionStatus!.slot;
    const confirmedAt = s.got.findIndex((u) => u.slot?.slot === slot && u.slot.status === SlotStatus.SLOT_CONFIRMED);
    expect(confirmedAt).toBeGreaterThanOrEqual(0);
    expect(confirmedAt).toBeLessThan(i);
    s.stream.destroy();
  });

  it('blocks meta: one per slot with its blockhash, parent and executed transaction count', async () => {
    const s = await open(request({ blocksMeta: { m: {} } }));
    const sig = await send(bob, 1_000_000);
    await waitFor('landed', () => conn.getSignatureStatus(sig).then((x) => x.value?.slot));
    const slot = (await conn.getSignatureStatus(sig)).value!.slot;
    await waitFor('its block meta', () => s.got.some((u) => Number(u.blockMeta?.slot) === slot), Boolean, 10_000);
    s.stream.destroy();
    const meta = s.got.find((u) => Number(u.blockMeta?.slot) === slot)!.blockMeta!;
    expect(Number(meta.executedTransactionCount)).toBeGreaterThanOrEqual(1);
    expect(meta.parentSlot).toBe(String(slot - 1));
    expect(bs58.decode(meta.blockhash)).toHaveLength(32);
    const block = await conn.getBlock(slot, { maxSupportedTransactionVersion: 0, commitment: 'confirmed' }).catch(() => null);
    if (block !== null) expect(meta.blockhash).toBe(block.blockhash);
    expect(s.got.find((u) => u.blockMeta)!.filters).toEqual(['m']);
  });
});

describe('streams come and go', () => {
  it('a stream closed by the client and a new client afterwards both get updates (reconnect)', async () => {
    const a = await open(request({ slots: { s: {} } }));
    await waitFor('slot on the first stream', () => a.got.some((u) => u.slot), Boolean, 5_000);
    a.stream.destroy();
    const again = new Client(ln.grpcUrl!, 'any-token', undefined);
    await again.connect();
    const b = await again.subscribe();
    const got: SubscribeUpdate[] = [];
    b.on('data', (u: SubscribeUpdate) => got.push(u));
    await write(b, request({ slots: { s: {} } }));
    await waitFor('slot on the new stream', () => got.some((u) => u.slot), Boolean, 5_000);
    b.destroy();
  });

  it('answers a ping on the stream with a pong carrying its id and keeps the filters', async () => {
    const s = await open(request({ slots: { s: {} } }));
    await write(s.stream, request({ ping: { id: 7 } }));
    await waitFor('pong', () => s.got.some((u) => u.pong?.id === 7), Boolean, 5_000);
    const n = s.got.filter((u) => u.slot).length;
    await waitFor('slots after the ping', () => s.got.filter((u) => u.slot).length > n + 2, Boolean, 5_000);
    s.stream.destroy();
  });
});

describe('unary methods', () => {
  it('Ping, GetSlot per commitment, GetLatestBlockhash, GetVersion', async () => {
    expect(await client.ping(5)).toEqual({ count: 5 });
    const processed = Number((await client.getSlot(CommitmentLevel.PROCESSED)).slot);
    const confirmed = Number((await client.getSlot(CommitmentLevel.CONFIRMED)).slot);
    const finalized = Number((await client.getSlot(CommitmentLevel.FINALIZED)).slot);
    expect(processed).toBeGreaterThan(FINALIZED_DEPTH);
    expect(processed - confirmed).toBeGreaterThanOrEqual(0);
    expect(processed - finalized).toBeGreaterThanOrEqual(FINALIZED_DEPTH - CONFIRMED_DEPTH);
    expect(Math.abs(processed - ((await conn.getSlot('processed')) - 1))).toBeLessThanOrEqual(2);
    const bh = await client.getLatestBlockhash(CommitmentLevel.CONFIRMED);
    expect((await conn.isBlockhashValid(bh.blockhash)).value).toBe(true);
    expect(Number(bh.lastValidBlockHeight)).toBe(Number(bh.slot) + 150);
    const v = JSON.parse((await client.getVersion()).version);
    expect(v.version.solana).toBe((await conn.getVersion())['solana-core']);
  });

  it('answers UNIMPLEMENTED for the methods and filters it does not serve', async () => {
    for (const call of [() => client.getBlockHeight(), () => client.isBlockhashValid('x'), () => client.subscribeReplayInfo(), () => client.subscribeDeshred()]) {
      const err = await call().then(() => null, (e: Error) => e);
      expect(String(err?.cause ?? err)).toMatch(/not implemented/i);
    }
    const s = await open(request({ accounts: { a: { account: [], owner: [], filters: [] } } }));
    const err = await s.error;
    expect(String(err.cause ?? err)).toMatch(/not implemented[\s\S]*accounts filters are not served/i);
  });

  it('answers INVALID_ARGUMENT for a filter with a bad pubkey, as the real server', async () => {
    const s = await open(request({ transactions: { t: { accountInclude: ['not-a-key'], accountExclude: [], accountRequired: [] } } }));
    const err = await s.error;
    expect(String(err.cause ?? err)).toMatch(/failed to create filter: transactions\.t\.accountInclude/);
  });
});

describe('slotrelay localnet --grpc-port (process)', () => {
  it('names its gRPC endpoint on the ready line and serves it; without the flag there is none', async () => {
    const child = spawn(process.execPath, ['dist/src/cli.js', 'localnet', '--rpc-port', '0', '--grpc-port', '0', '--slot-ms', '200'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const ready = JSON.parse((await lines.next()).value as string);
    expect(ready.grpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const c = new Client(ready.grpcUrl, undefined, undefined);
    await c.connect();
    await waitFor('slot 2 processed', () => c.getSlot(CommitmentLevel.PROCESSED).then((r) => Number(r.slot) >= 2), Boolean, 5_000);
    child.kill('SIGTERM');
    await once(child, 'exit');
    const plain = spawn(process.execPath, ['dist/src/cli.js', 'localnet', '--rpc-port', '0', '--slot-ms', '200'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const plainReady = JSON.parse((await createInterface({ input: plain.stdout! })[Symbol.asyncIterator]().next()).value as string);
    expect(plainReady.grpcUrl).toBeNull();
    plain.kill('SIGTERM');
    await once(plain, 'exit');
  });
});

describe('Alpenglow (the localnet\'s default consensus)', () => {
  it('a block is confirmed and finalized together when its certificate arrives; a skipped slot is DEAD with no bank; GetSlot confirmed = finalized', async () => {
    const ag = await startLocalnet({ slotMs: 100, finalityDelayMs: 150, validators: 2, grpcPort: 0 });
    const own = new Client(ag.grpcUrl!, undefined, undefined);
    try {
      await own.connect();
      const stream = await own.subscribe();
      const got: { slot: number; status: number; at: number }[] = [];
      stream.on('data', (u: SubscribeUpdate) => {
        if (u.slot) got.push({ slot: Number(u.slot.slot), status: u.slot.status, at: Date.now() });
      });
      await write(stream, request({ slots: { all: { interslotUpdates: true } } }));
      const block = ag.clock.current + 2;
      await waitFor('a block finalized', () => got.some((u) => u.slot === block && u.status === SlotStatus.SLOT_FINALIZED), Boolean, 10_000);
      const of = got.filter((u) => u.slot === block);
      expect(of.map((u) => u.status)).toEqual([
        SlotStatus.SLOT_FIRST_SHRED_RECEIVED,
        SlotStatus.SLOT_CREATED_BANK,
        SlotStatus.SLOT_COMPLETED,
        SlotStatus.SLOT_PROCESSED,
        SlotStatus.SLOT_CONFIRMED,
        SlotStatus.SLOT_FINALIZED,
      ]);
      // Finality ~150 ms after the block (not a tower depth of slots): processed -> finalized well under 4 slots.
      expect(of[5].at - of[3].at).toBeLessThan(1_000);
      const confirmed = Number((await own.getSlot(CommitmentLevel.CONFIRMED)).slot);
      const finalized = Number((await own.getSlot(CommitmentLevel.FINALIZED)).slot);
      expect(Math.abs(confirmed - finalized)).toBeLessThanOrEqual(1); // the same certificate, read a moment apart

      // Validator 1 misses its slots: each is DEAD when the next starts, and never processed or finalized.
      ag.setMissingSlots(1, true);
      const from = ag.clock.current + 1;
      await waitFor('a dead slot', () => got.some((u) => u.slot > from && u.status === SlotStatus.SLOT_DEAD), Boolean, 10_000);
      ag.setMissingSlots(1, false);
      const dead = got.find((u) => u.slot > from && u.status === SlotStatus.SLOT_DEAD)!.slot;
      await waitFor('a later block finalized', () => got.some((u) => u.slot > dead && u.status === SlotStatus.SLOT_FINALIZED), Boolean, 10_000);
      expect(got.filter((u) => u.slot === dead).map((u) => u.status)).toEqual([SlotStatus.SLOT_DEAD]);
      stream.destroy();
    } finally {
      await ag.stop();
    }
  });
});
