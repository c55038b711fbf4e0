// signatureSubscribe over a plain WebSocket (the `ws` package already in node_modules through web3.js; no new
// dependency): the notification for a transaction that lands has Agave's shape, fires once at the requested
// commitment and removes the subscription; a signature that is not base58 of 64 bytes answers -32602 as Agave does.
import { Connection, Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { signedTransfer } from '../../helpers/transactions.js';

const SLOT_MS = 50;
const FINALIZED_DEPTH = 6;
let ln: Localnet;
let conn: Connection;
let ws: WebSocket;
const payer = Keypair.generate();
const inbox: any[] = [];
let nextId = 1;

function next(pred: (m: any) => boolean, ms = 5_000): Promise<any> {
  return new Promise((resolve, reject) => {
    const end = Date.now() + ms;
    const poll = (): void => {
      const i = inbox.findIndex(pred);
      if (i >= 0) return resolve(inbox.splice(i, 1)[0]);
      if (Date.now() > end) return reject(new Error('no matching message'));
      setTimeout(poll, 5);
    };
    poll();
  });
}

async function call(method: string, params: unknown[]): Promise<any> {
  const id = nextId++;
  ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  return next((m) => m.id === id);
}

beforeAll(async () => {
  // Tower: this file is about depth-based confirmation (confirmed 1 slot, finalized FINALIZED_DEPTH slots behind).
  ln = await startLocalnet({ consensus: 'tower', slotMs: SLOT_MS, validators: 2, finalizedDepth: FINALIZED_DEPTH });
  conn = new Connection(ln.rpcUrl, 'confirmed');
  const sig = await conn.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
  const bh = await conn.getLatestBlockhash();
  await conn.confirmTransaction({ signature: sig, ...bh }, 'confirmed');
  ws = new WebSocket(ln.wsUrl);
  ws.on('message', (data) => inbox.push(JSON.parse(data.toString())));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
});

afterAll(async () => {
  ws?.close();
  await ln?.stop();
});

describe('signatureSubscribe', () => {
  it('notifies once, in Agave\'s shape, when the transaction reaches the commitment, then drops the subscription', async () => {
    const tx = await signedTransfer(conn, payer, 1_000_000, 'confirmed');
    const sub = await call('signatureSubscribe', [tx.signature, { commitment: 'confirmed' }]);
    expect(sub).toEqual({ jsonrpc: '2.0', result: expect.any(Number), id: sub.id });
    const id: number = sub.result;
    expect(await conn.sendRawTransaction(tx.bytes, { skipPreflight: true })).toBe(tx.signature);

    const note = await next((m) => m.method === 'signatureNotification' && m.params?.subscription === id);
    expect(note).toEqual({
      jsonrpc: '2.0',
      method: 'signatureNotification',
      params: { result: { context: { slot: expect.any(Number) }, value: { err: null } }, subscription: id },
    });
    const landed = ln.bank.status(tx.signature)!;
    expect(landed.err).toBeNull();
    // Confirmed = 1 slot behind the tip: notified no earlier than one slot after the landing slot.
    expect(note.params.result.context.slot).toBeGreaterThanOrEqual(landed.slot + 1);

    // Fired once and removed, as on Agave: unsubscribing now is an unknown id, and nothing else arrives for it.
    const unsub = await call('signatureUnsubscribe', [id]);
    expect(unsub.error).toEqual({ code: -32602, message: 'Invalid subscription id.' });
    await new Promise((r) => setTimeout(r, 4 * SLOT_MS));
    expect(inbox.filter((m) => m.params?.subscription === id)).toEqual([]);
  });

  it('default commitment is finalized: no notification before finalizedDepth slots', async () => {
    const tx = await signedTransfer(conn, payer, 1_000_000, 'confirmed');
    const { result: id } = await call('signatureSubscribe', [tx.signature]);
    await conn.sendRawTransaction(tx.bytes, { skipPreflight: true });
    const note = await next((m) => m.method === 'signatureNotification' && m.params?.subscription === id);
    expect(note.params.result.value).toEqual({ err: null });
    expect(note.params.result.context.slot).toBeGreaterThanOrEqual(ln.bank.status(tx.signature)!.slot + FINALIZED_DEPTH);
  });

  it('answers -32602 for a signature that is not base58 of 64 bytes; a well-formed unknown one subscribes', async () => {
    const sig64 = bs58.encode(new Uint8Array(64).fill(9));
    const invalid = [
      'not-base58-0OIl', // characters outside the alphabet
      bs58.encode(new Uint8Array(32).fill(9)), // a pubkey: 32 bytes
      bs58.encode(new Uint8Array(65).fill(9)), // 65 bytes
      sig64 + '1111', // too long (> 88 characters, decodes to 68 bytes)
      '',
    ];
    for (const s of invalid) {
      const r = await call('signatureSubscribe', [s]);
      expect(r, s).toEqual({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid Request: Invalid signature provided' }, id: r.id });
    }
    const wrongType = await call('signatureSubscribe', [12]);
    expect(wrongType.error.code).toBe(-32602);
    // A well-formed signature nobody sent is accepted (the subscription just never fires).
    const ok = await call('signatureSubscribe', [sig64]);
    expect(ok.result).toEqual(expect.any(Number));
    expect((await call('signatureUnsubscribe', [ok.result])).result).toBe(true);
  });
});
