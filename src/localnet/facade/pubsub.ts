// PubSub over WebSocket for the facade (localnet process, main thread; per slot and per commit, cold-ish), with
// Agave's shapes:
//   subscribe -> {"result": <subscription id>}; unsubscribe -> true; an id this socket does not hold (of any kind, as
//   Agave's per-connection table) -> -32602 "Invalid subscription id."
//   slotSubscribe      {"method":"slotNotification","params":{"result":{"parent","root","slot"},"subscription":n}},
//                      when the slot's bank is created: shredToBankMs after its first shred (src/localnet/shred-to-bank.ts)
//   rootSubscribe      {"method":"rootNotification","params":{"result":<root slot>,"subscription":n}}
//   slotsUpdatesSubscribe {"method":"slotsUpdatesNotification","params":{"result":{"type","slot","timestamp",...},
//                      "subscription":n}}: createdBank (with parent) with the slot notification, frozen (with stats)
//                      when it ends, optimisticConfirmation and root as the commitments reach it. Under Alpenglow a
//                      certificate gives both at once (confirmed = finalized), ~finalityDelayMs after the block; a
//                      skipped slot has no bank: no slot notification, no createdBank/frozen, and `dead` (with an
//                      `err`) when the next slot starts, as the Geyser feed's SLOT_DEAD (src/localnet/grpc/slot-feed.ts):
//                      how a subscriber learns the skip without waiting for the next block's parent.
//   signatureSubscribe {"method":"signatureNotification","params":{"result":{"context":{"slot"},"value":{"err":...}},
//                      "subscription":n}} (or value "receivedSignature" first, with enableReceivedNotification). Fires
//                      once, when the transaction reaches the commitment (default finalized), and is then removed.
//                      A signature that is not base58 of 64 bytes -> -32602 "Invalid Request: Invalid signature provided".
//   accountSubscribe   [pubkey, {commitment, encoding, dataSlice}] (Agave's RpcAccountInfoConfig; default encoding
//                      binary, commitment finalized) {"method":"accountNotification","params":{"result":{"context":
//                      {"slot"},"value":<UiAccount as getAccountInfo renders it>},"subscription":n}}, once
//                      per slot in which a committed transaction wrote the account, when that slot reaches the
//                      commitment, with the account as it was at the end of that slot (a closed account: Agave's
//                      default account, 0 lamports, system-owned, empty data). A bad pubkey -> -32602
//                      "Invalid Request: Invalid pubkey provided".
// How account changes are followed: at each commit the account state of every SUBSCRIBED account the transaction
// wrote is kept (the slot's last write wins), until the slot is finalized. Accounts nobody
// subscribes to cost nothing; the price is that a change made before the first subscription to an account, still
// short of the subscription's commitment, is not notified (Agave would). Processed notifications wait for the
// slot's end (Agave notifies a frozen bank), so they carry the slot's final state.
// The same JSON-RPC envelope rules as HTTP (src/jsonrpc); batches are answered in order.
import bs58 from 'bs58';
import type { WebSocket } from 'uWebSockets.js';
import type { TxRecord } from '../bank.js';
import { dispatchJsonRpc, type MethodHandler } from '../../jsonrpc/dispatch.js';
import { parseJsonRpcBody } from '../../jsonrpc/envelope.js';
import { configObject, optionalBoolean, optionalCommitment, paramsArray, type Commitment } from '../../jsonrpc/params.js';
import { serdeType } from '../../errors/serde-type.js';
import { accountRender, accountsJson, uiAccount, type AccountRender, type BankAccount } from './account-encoding.js';
import { invalidParams, slotAt, type FacadeContext } from './context.js';
import { sendText } from '../../rpc/pubsub/uws-send.js';

export interface SocketState {
  readonly subs: Set<number>;
}

type Ws = WebSocket<SocketState>;

interface SignatureSub {
  readonly id: number;
  readonly ws: Ws;
  readonly signature: string;
  readonly commitment: Commitment;
}

interface AccountSub {
  readonly id: number;
  readonly ws: Ws;
  readonly address: string;
  readonly commitment: Commitment;
  readonly render: AccountRender;
  /** The newest written slot already notified (or already at the commitment when subscribing). */
  lastNotifiedSlot: number;
}

/** An account's state at the end of a slot in which a committed transaction wrote it. */
interface AccountWrite {
  readonly slot: number;
  account: BankAccount | null;
}

interface Conn {
  readonly ws: Ws;
}

const MAX_BATCH = 100;
/** Agave MAX_BASE58_SIGNATURE_LEN: a longer string is refused before decoding. */
const MAX_BASE58_SIGNATURE_LEN = 88;

/** Agave's rpc_pubsub param::<T>(): any FromStr failure is this -32602. */
function parseFailure(thing: string): Error {
  return invalidParams(`Invalid Request: Invalid ${thing} provided`);
}

/** Agave's Signature::from_str as used by rpc_pubsub's param(): base58 that decodes to exactly 64 bytes. */
function signatureParam(v: unknown): string {
  if (typeof v !== 'string') throw invalidParams('Invalid params: invalid type: expected a string');
  let ok = v.length <= MAX_BASE58_SIGNATURE_LEN;
  if (ok) {
    try {
      ok = bs58.decode(v).length === 64;
    } catch {
      ok = false;
    }
  }
  if (!ok) throw parseFailure('signature');
  return v;
}

/** Agave's Pubkey::from_str: at most 44 base58 characters decoding to 32 bytes. */
function pubkeyParam(v: unknown): { text: string; bytes: Uint8Array } {
  if (typeof v !== 'string') throw invalidParams(`Invalid params: invalid type: ${serdeType(v)}, expected a string`);
  let bytes: Uint8Array | undefined;
  if (v.length <= 44) {
    try {
      bytes = bs58.decode(v);
    } catch {
      bytes = undefined;
    }
  }
  if (bytes === undefined || bytes.length !== 32) throw parseFailure('pubkey');
  return { text: v, bytes };
}

/**
 * UiAccount for a notification. Agave's PubSub encodes base58 without getAccountInfo's 128-byte cap (that check
 * lives in its HTTP handler), so binary/base58 of a larger account is encoded here rather than refused.
 */
function notificationAccount(a: BankAccount, r: AccountRender): Record<string, unknown> {
  if (r.encoding !== 'binary' && r.encoding !== 'base58') return uiAccount(a, r);
  const out = uiAccount(a, { encoding: 'base64', slice: r.slice });
  const full = a.data();
  const data = r.slice === undefined ? full : full.subarray(r.slice.offset, r.slice.offset + r.slice.length);
  out.data = r.encoding === 'binary' ? bs58.encode(data) : [bs58.encode(data), 'base58'];
  return out;
}

/** An account that no longer exists is notified as Agave does: the default account (0 lamports, system-owned, no data). */
const CLOSED_ACCOUNT: BankAccount = Object.freeze({
  data: () => new Uint8Array(0),
  executable: () => false,
  lamports: () => 0n,
  owner: () => new Uint8Array(32),
  rentEpoch: () => 0n,
});

export class PubSub {
  private nextId = 0;
  private readonly slotSubs = new Map<number, Ws>();
  private readonly rootSubs = new Map<number, Ws>();
  private readonly slotsUpdatesSubs = new Map<number, Ws>();
  /** The block in progress (slotsUpdates' frozen stats): its slot and what it committed. */
  private block = { slot: 0, ok: 0, failed: 0 };
  /** The block before the newest one: the parent its createdBank and slot notification name. */
  private parent = 0;
  private lastOptimistic = -1;
  private readonly sigSubs = new Map<number, SignatureSub>();
  private readonly accountSubs = new Map<number, AccountSub>();
  /** address -> its subscriptions (one entry per subscribed address). */
  private readonly accountSubsByAddress = new Map<string, Set<AccountSub>>();
  /** address -> writes of recent slots, oldest first (subscribed addresses only). */
  private readonly accountWrites = new Map<string, AccountWrite[]>();
  private lastRoot = -1;
  private readonly closed = new WeakSet<Ws>();
  private readonly table: Map<string, MethodHandler<Conn>>;

  constructor(private readonly ctx: FacadeContext) {
    const unsubscribe: MethodHandler<Conn> = (p, c) => this.unsubscribe(p, c);
    this.table = new Map<string, MethodHandler<Conn>>([
      ['slotSubscribe', (p, c) => this.simpleSubscribe(p, c, this.slotSubs)],
      ['slotUnsubscribe', unsubscribe],
      ['rootSubscribe', (p, c) => this.simpleSubscribe(p, c, this.rootSubs)],
      ['rootUnsubscribe', unsubscribe],
      ['slotsUpdatesSubscribe', (p, c) => this.simpleSubscribe(p, c, this.slotsUpdatesSubs)],
      ['slotsUpdatesUnsubscribe', unsubscribe],
      ['signatureSubscribe', (p, c) => this.signatureSubscribe(p, c)],
      ['signatureUnsubscribe', unsubscribe],
      ['accountSubscribe', (p, c) => this.accountSubscribe(p, c)],
      ['accountUnsubscribe', unsubscribe],
    ]);
  }

  /** The RPC node's one-way distance from its clients (rpc.oneWayDelayMs): messages are handled and sent this much later. */
  delayMs = 0;

  message(ws: Ws, text: string): void {
    if (this.delayMs > 0) {
      setTimeout(() => this.handle(ws, text), this.delayMs);
      return;
    }
    this.handle(ws, text);
  }

  private handle(ws: Ws, text: string): void {
    if (this.closed.has(ws)) return; // closed while the message was on its way
    const out = dispatchJsonRpc(parseJsonRpcBody(text, MAX_BATCH), this.table, { ws }, { onInternalError: () => undefined });
    const send = (t: string | null): void => {
      if (t !== null) this.send(ws, t);
    };
    if (out === null || typeof out === 'string') send(out);
    else void out.then(send);
  }

  close(ws: Ws): void {
    this.closed.add(ws);
    for (const id of ws.getUserData().subs) this.remove(id);
  }

  private remove(id: number): void {
    this.slotSubs.delete(id);
    this.rootSubs.delete(id);
    this.slotsUpdatesSubs.delete(id);
    this.sigSubs.delete(id);
    const a = this.accountSubs.get(id);
    if (a === undefined) return;
    this.accountSubs.delete(id);
    const set = this.accountSubsByAddress.get(a.address);
    set?.delete(a);
    if (set !== undefined && set.size === 0) {
      this.accountSubsByAddress.delete(a.address);
      this.accountWrites.delete(a.address);
    }
  }

  private simpleSubscribe(params: unknown, c: Conn, map: Map<number, Ws>): string {
    paramsArray(params, 0, 0);
    const id = this.nextId++;
    map.set(id, c.ws);
    c.ws.getUserData().subs.add(id);
    return String(id);
  }

  private signatureSubscribe(params: unknown, c: Conn): string {
    const p = paramsArray(params, 1, 2);
    const signature = signatureParam(p[0]);
    const cfg = configObject(p[1]) ?? {};
    const commitment = optionalCommitment(cfg.commitment, 'commitment') ?? 'finalized';
    const received = optionalBoolean(cfg.enableReceivedNotification, 'enableReceivedNotification') ?? false;
    const id = this.nextId++;
    const sub: SignatureSub = { id, ws: c.ws, signature, commitment };
    this.sigSubs.set(id, sub);
    c.ws.getUserData().subs.add(id);
    // Notify after the subscription id has been answered.
    setImmediate(() => {
      if (received && this.sigSubs.has(id)) this.notifySignature(sub, this.ctx.clock.current, 'receivedSignature', false);
      this.check(sub);
    });
    return String(id);
  }

  private accountSubscribe(params: unknown, c: Conn): string {
    const p = paramsArray(params, 1, 2);
    const key = pubkeyParam(p[0]);
    const cfg = configObject(p[1]) ?? {};
    const commitment = optionalCommitment(cfg.commitment, 'commitment') ?? 'finalized';
    const render = accountRender(cfg, 'binary');
    const id = this.nextId++;
    // Changes already at the commitment are what the subscriber starts from: no initial notification (Agave).
    const sub: AccountSub = { id, ws: c.ws, address: key.text, commitment, render, lastNotifiedSlot: this.notifiableSlot(commitment) };
    this.accountSubs.set(id, sub);
    let set = this.accountSubsByAddress.get(key.text);
    if (set === undefined) this.accountSubsByAddress.set(key.text, (set = new Set()));
    set.add(sub);
    c.ws.getUserData().subs.add(id);
    return String(id);
  }

  private unsubscribe(params: unknown, c: Conn): string {
    const p = paramsArray(params, 1, 1);
    const id = p[0];
    if (typeof id !== 'number' || !c.ws.getUserData().subs.has(id)) throw invalidParams('Invalid subscription id.');
    this.remove(id);
    c.ws.getUserData().subs.delete(id);
    return 'true';
  }

  private send(ws: Ws, text: string): void {
    // sendText, not ws.send: large account notifications would lose bytes to a uWS bug (src/rpc/pubsub/uws-send.ts).
    if (this.delayMs > 0) {
      // Equal delays keep the order (Node runs equal timeouts in insertion order).
      setTimeout(() => {
        if (!this.closed.has(ws)) sendText(ws, text);
      }, this.delayMs);
    } else if (!this.closed.has(ws)) sendText(ws, text);
  }

  /** The newest slot whose writes a subscription at `commitment` may be told about now: complete slots only. */
  private notifiableSlot(commitment: Commitment): number {
    return Math.min(slotAt(this.ctx, commitment), this.ctx.clock.current - 1);
  }

  private slotsUpdate(result: string): void {
    for (const [id, ws] of this.slotsUpdatesSubs) {
      this.send(ws, `{"jsonrpc":"2.0","method":"slotsUpdatesNotification","params":{"result":${result},"subscription":${id}}}`);
    }
  }

  /**
   * First-shred listener (src/localnet/shred-to-bank.ts, at the slot clock's tick, after the consensus marked the
   * slot): the block before a slot with a block is frozen (slotsUpdates), then whatever reached its commitment (Tower
   * moves its commitments here; Alpenglow's certificates in onFinalized). The slot notification waits for the bank.
   */
  onSlot(slot: number): void {
    const cons = this.ctx.consensus;
    // The slot that just ended was skipped (Alpenglow's skip certificate): `dead`, before the next block's notifications.
    if (slot > 0 && cons.isSkipped(slot - 1) && this.slotsUpdatesSubs.size > 0) {
      this.slotsUpdate(`{"type":"dead","slot":${slot - 1},"timestamp":${Date.now()},"err":"skipped: its leader missed the slot"}`);
    }
    if (!cons.isSkipped(slot)) {
      if (this.slotsUpdatesSubs.size > 0) {
        const b = this.block;
        const stats = `{"numTransactionEntries":${b.ok + b.failed},"numSuccessfulTransactions":${b.ok},"numFailedTransactions":${b.failed},"maxTransactionsPerEntry":${b.ok + b.failed}}`;
        if (b.slot > 0) this.slotsUpdate(`{"type":"frozen","slot":${b.slot},"timestamp":${Date.now()},"stats":${stats}}`);
      }
      this.parent = this.block.slot;
      this.block = { slot, ok: 0, failed: 0 };
    }
    this.advance();
  }

  /**
   * Bank listener (src/localnet/shred-to-bank.ts): replay created `slot`'s bank; Agave's slotSubscribe notifies here
   * (ReplayStage, before the bank is made) and slotsUpdates says createdBank. A skipped slot has no bank.
   */
  onBankCreated(slot: number): void {
    const cons = this.ctx.consensus;
    if (cons.isSkipped(slot)) return;
    const parent = this.parent;
    if (this.slotsUpdatesSubs.size > 0) this.slotsUpdate(`{"type":"createdBank","slot":${slot},"parent":${parent},"timestamp":${Date.now()}}`);
    if (this.slotSubs.size > 0) {
      const result = `{"parent":${parent},"root":${cons.finalizedSlot()},"slot":${slot}}`;
      for (const [id, ws] of this.slotSubs) {
        this.send(ws, `{"jsonrpc":"2.0","method":"slotNotification","params":{"result":${result},"subscription":${id}}}`);
      }
    }
  }

  /** Finality listener (src/localnet/consensus.ts): Alpenglow's certificate for a block arrived. */
  onFinalized(): void {
    if (this.ctx.consensus.mode === 'alpenglow') this.advance();
  }

  /** Commitments moved: optimistic confirmation and root notifications, then signature and account subscriptions. */
  private advance(): void {
    const cons = this.ctx.consensus;
    const now = Date.now();
    const confirmed = cons.confirmedSlot();
    if (confirmed !== this.lastOptimistic) {
      this.lastOptimistic = confirmed;
      if (this.slotsUpdatesSubs.size > 0) this.slotsUpdate(`{"type":"optimisticConfirmation","slot":${confirmed},"timestamp":${now}}`);
    }
    const root = cons.finalizedSlot();
    if (root !== this.lastRoot) {
      this.lastRoot = root;
      for (const [id, ws] of this.rootSubs) this.send(ws, `{"jsonrpc":"2.0","method":"rootNotification","params":{"result":${root},"subscription":${id}}}`);
      if (this.slotsUpdatesSubs.size > 0) this.slotsUpdate(`{"type":"root","slot":${root},"timestamp":${now}}`);
    }
    for (const sub of this.sigSubs.values()) this.check(sub);
    if (this.accountSubs.size > 0) this.notifyAccounts(root);
  }

  /** Commit listener: processed signature subscriptions fire at once; written subscribed accounts are recorded. */
  onCommit(rec: TxRecord): void {
    if (rec.slot === this.block.slot) {
      if (rec.err === null) this.block.ok++;
      else this.block.failed++;
    }
    if (this.sigSubs.size > 0) {
      for (const sub of this.sigSubs.values()) if (sub.signature === rec.signature) this.check(sub);
    }
    if (this.accountSubsByAddress.size === 0) return;
    const keys = rec.parsed.accountKeys;
    // A failed transaction only charged its fee payer.
    const n = rec.err === null ? keys.length : 1;
    for (let i = 0; i < n; i++) {
      if (!rec.parsed.writable[i] || !this.accountSubsByAddress.has(keys[i])) continue;
      let writes = this.accountWrites.get(keys[i]);
      if (writes === undefined) this.accountWrites.set(keys[i], (writes = []));
      const account = this.ctx.bank.svm.getAccount(rec.parsed.keyBytes[i]);
      const last = writes[writes.length - 1];
      if (last !== undefined && last.slot === rec.slot) last.account = account;
      else writes.push({ slot: rec.slot, account });
    }
  }

  private notifyAccounts(root: number): void {
    for (const sub of this.accountSubs.values()) {
      const writes = this.accountWrites.get(sub.address);
      if (writes === undefined) continue;
      const upTo = this.notifiableSlot(sub.commitment);
      let newest: AccountWrite | undefined;
      for (const w of writes) if (w.slot > sub.lastNotifiedSlot && w.slot <= upTo) newest = w;
      if (newest === undefined) continue;
      sub.lastNotifiedSlot = newest.slot;
      const value = notificationAccount(newest.account ?? CLOSED_ACCOUNT, sub.render);
      const result = accountsJson({ context: { slot: upTo }, value });
      this.send(sub.ws, `{"jsonrpc":"2.0","method":"accountNotification","params":{"result":${result},"subscription":${sub.id}}}`);
    }
    // Every subscription has seen the writes at or below the finalized slot: keep the newer ones only.
    const oldest = root;
    for (const writes of this.accountWrites.values()) {
      while (writes.length > 0 && writes[0].slot < oldest) writes.shift();
    }
  }

  private check(sub: SignatureSub): void {
    if (!this.sigSubs.has(sub.id)) return;
    const rec = this.ctx.bank.status(sub.signature);
    if (rec === undefined) return;
    if (!this.ctx.consensus.reached(rec.slot, sub.commitment)) return;
    this.notifySignature(sub, this.ctx.clock.current, { err: rec.err }, true);
  }

  private notifySignature(sub: SignatureSub, slot: number, value: unknown, final: boolean): void {
    if (final) {
      this.sigSubs.delete(sub.id);
      sub.ws.getUserData().subs.delete(sub.id);
    }
    const result = JSON.stringify({ context: { slot }, value });
    this.send(sub.ws, `{"jsonrpc":"2.0","method":"signatureNotification","params":{"result":${result},"subscription":${sub.id}}}`);
  }
}
