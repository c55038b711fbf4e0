// PubSub over WebSocket for the facade (localnet process, main thread; per slot and per commit, cold-ish):
// slotSubscribe/slotUnsubscribe and signatureSubscribe/signatureUnsubscribe with Agave's shapes:
//   subscribe -> {"result": <subscription id>}, unsubscribe -> true (unknown id -> -32602 "Invalid subscription id.")
//   {"method":"slotNotification","params":{"result":{"parent","root","slot"},"subscription":n}}
//   {"method":"signatureNotification","params":{"result":{"context":{"slot"},"value":{"err":...}},"subscription":n}}
//   (or value "receivedSignature" first, with enableReceivedNotification). A signature subscription fires once, when
//   the transaction reaches the requested commitment (default finalized), and is then removed, as on Agave.
//   A signature that is not base58 of 64 bytes answers -32602 "Invalid Request: Invalid signature provided" (Agave's
//   rpc_pubsub param::<Signature>).
// The same JSON-RPC envelope rules as HTTP (src/jsonrpc); batches are answered in order.
import bs58 from 'bs58';
import type { WebSocket } from 'uWebSockets.js';
import type { TxRecord } from '../bank.js';
import { dispatchJsonRpc, type MethodHandler } from '../../jsonrpc/dispatch.js';
import { parseJsonRpcBody } from '../../jsonrpc/envelope.js';
import { configObject, optionalBoolean, optionalCommitment, paramsArray, type Commitment } from '../../jsonrpc/params.js';
import { invalidParams, type FacadeContext } from './context.js';

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

interface Conn {
  readonly ws: Ws;
}

const MAX_BATCH = 100;
/** Agave MAX_BASE58_SIGNATURE_LEN: a longer string is refused before decoding. */
const MAX_BASE58_SIGNATURE_LEN = 88;

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
  if (!ok) throw invalidParams('Invalid Request: Invalid signature provided');
  return v;
}

export class PubSub {
  private nextId = 0;
  private readonly slotSubs = new Map<number, Ws>();
  private readonly sigSubs = new Map<number, SignatureSub>();
  private readonly closed = new WeakSet<Ws>();
  private readonly table: Map<string, MethodHandler<Conn>>;

  constructor(private readonly ctx: FacadeContext) {
    this.table = new Map<string, MethodHandler<Conn>>([
      ['slotSubscribe', (p, c) => this.slotSubscribe(p, c)],
      ['slotUnsubscribe', (p, c) => this.unsubscribe(p, c, this.slotSubs)],
      ['signatureSubscribe', (p, c) => this.signatureSubscribe(p, c)],
      ['signatureUnsubscribe', (p, c) => this.unsubscribe(p, c, this.sigSubs)],
    ]);
  }

  message(ws: Ws, text: string): void {
    const out = dispatchJsonRpc(parseJsonRpcBody(text, MAX_BATCH), this.table, { ws }, { onInternalError: () => undefined });
    const send = (t: string | null): void => {
      if (t !== null && !this.closed.has(ws)) ws.send(t, false);
    };
    if (out === null || typeof out === 'string') send(out);
    else void out.then(send);
  }

  close(ws: Ws): void {
    this.closed.add(ws);
    for (const id of ws.getUserData().subs) {
      this.slotSubs.delete(id);
      this.sigSubs.delete(id);
    }
  }

  private slotSubscribe(params: unknown, c: Conn): string {
    paramsArray(params, 0, 0);
    const id = this.nextId++;
    this.slotSubs.set(id, c.ws);
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

  private unsubscribe(params: unknown, c: Conn, map: Map<number, unknown>): string {
    const p = paramsArray(params, 1, 1);
    const id = p[0];
    if (typeof id !== 'number' || !map.has(id) || !c.ws.getUserData().subs.has(id)) throw invalidParams('Invalid subscription id.');
    map.delete(id);
    c.ws.getUserData().subs.delete(id);
    return 'true';
  }

  private send(ws: Ws, text: string): void {
    if (!this.closed.has(ws)) ws.send(text, false);
  }

  /** Slot listener: slot notifications, then signature subscriptions whose transaction reached their commitment. */
  onSlot(slot: number): void {
    if (this.slotSubs.size > 0) {
      const root = Math.max(0, slot - this.ctx.finalizedDepth);
      const result = `{"parent":${Math.max(0, slot - 1)},"root":${root},"slot":${slot}}`;
      for (const [id, ws] of this.slotSubs) {
        this.send(ws, `{"jsonrpc":"2.0","method":"slotNotification","params":{"result":${result},"subscription":${id}}}`);
      }
    }
    for (const sub of this.sigSubs.values()) this.check(sub);
  }

  /** Commit listener: processed-commitment subscriptions fire as soon as the transaction is in a block. */
  onCommit(rec: TxRecord): void {
    if (this.sigSubs.size === 0) return;
    for (const sub of this.sigSubs.values()) if (sub.signature === rec.signature) this.check(sub);
  }

  private check(sub: SignatureSub): void {
    if (!this.sigSubs.has(sub.id)) return;
    const rec = this.ctx.bank.status(sub.signature);
    if (rec === undefined) return;
    const depth = this.ctx.clock.current - rec.slot;
    const need = sub.commitment === 'processed' ? 0 : sub.commitment === 'confirmed' ? this.ctx.confirmedDepth : this.ctx.finalizedDepth;
    if (depth < need) return;
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
