// Wire parser strictness (litesvm aborts on bad bytes, so the parser must catch them) and the leader schedule.
import { Keypair, SystemProgram, Transaction, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { LeaderSchedule } from '../../../src/localnet/leader-schedule.js';
import { parseWireTransaction, WireError } from '../../../src/localnet/wire.js';

const HASH = bs58.encode(Buffer.alloc(32, 3));

describe('wire parser', () => {
  const payer = Keypair.generate();
  const legacy = (): Uint8Array => {
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash: HASH, lastValidBlockHeight: 0 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 5 }),
    );
    tx.sign(payer);
    return tx.serialize();
  };

  it('reads legacy and v0 transactions', () => {
    const l = parseWireTransaction(legacy());
    expect(l.version).toBe('legacy');
    expect(l.recentBlockhash).toBe(HASH);
    expect(l.writable).toEqual([true, true, false]);
    const msg = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: HASH,
      instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 5 })],
    }).compileToV0Message();
    const v = new VersionedTransaction(msg);
    v.sign([payer]);
    const p = parseWireTransaction(v.serialize());
    expect(p.version).toBe(0);
    expect(p.signatures[0]).toBe(bs58.encode(v.signatures[0]));
  });

  it('refuses truncated, trailing and insane bytes with a WireError', () => {
    const b = legacy();
    expect(() => parseWireTransaction(b.subarray(0, b.length - 1))).toThrow(WireError);
    expect(() => parseWireTransaction(Buffer.concat([b, Buffer.from([0])]))).toThrow(WireError);
    expect(() => parseWireTransaction(Uint8Array.from([1, 2, 3]))).toThrow(WireError);
    const zeroSigs = Uint8Array.from(b.subarray(64));
    zeroSigs[0] = 0;
    expect(() => parseWireTransaction(zeroSigs)).toThrow(WireError);
  });
});

describe('leader schedule', () => {
  const nodes = [
    { identity: 'A', stake: 700n },
    { identity: 'B', stake: 200n },
    { identity: 'C', stake: 100n },
  ];

  it('is deterministic per seed and epoch, with 4-slot windows', () => {
    const a = new LeaderSchedule(nodes, 4096, 's');
    const b = new LeaderSchedule(nodes, 4096, 's');
    expect(a.forEpoch(3)).toEqual(b.forEpoch(3));
    expect(a.forEpoch(3)).not.toEqual(a.forEpoch(4));
    const s = a.forEpoch(0);
    for (let i = 0; i < s.length; i += 4) expect(new Set(s.slice(i, i + 4)).size).toBe(1);
  });

  it('is stake-weighted', () => {
    const s = new LeaderSchedule(nodes, 40_000, 'w').forEpoch(0);
    const share = (id: string): number => s.filter((x) => x === id).length / s.length;
    expect(share('A')).toBeGreaterThan(0.65);
    expect(share('A')).toBeLessThan(0.75);
    expect(share('C')).toBeGreaterThan(0.07);
    expect(share('C')).toBeLessThan(0.13);
  });

  it('knows the next epoch ahead, not the one after', () => {
    const s = new LeaderSchedule(nodes, 8, 'k');
    expect(s.isKnown(15, 0)).toBe(true);
    expect(s.isKnown(16, 0)).toBe(false);
    const change = s.nextLeaderChange(0);
    expect(change % 4).toBe(0);
    expect(s.leaderAt(change)).not.toBe(s.leaderAt(0));
  });
});
