// The fuzzer's stand-in for the relay's upstream RPC node (harness process, node:http on 127.0.0.1; cold per call).
// It plays a small cluster for the relay's telemetry thread (a slot advancing with the clock, a 3-validator leader
// schedule, stake, nodes), so getLeaderSlots answers from a live snapshot, and it answers preflight simulations like
// an Agave node with sigVerify on: a transaction whose exact bytes the harness registered as signed is simulated
// (successfully, or failing with BlockhashNotFound when registered so), any other bytes fail signature
// verification (-32003), and a minContextSlot beyond the current slot answers -32016.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PublicKey } from '@solana/web3.js';

export const EPOCH_SLOTS = 8192;
export const SLOTS_PER_LEADER = 4;
export const BASE_SLOT = 1000;

/** The simulation value a registered "fail" transaction gets (the relay passes it on as -32002 data). */
export const FAILED_SIMULATION = Object.freeze({
  err: 'BlockhashNotFound',
  logs: [] as string[],
  accounts: null,
  unitsConsumed: 0,
  returnData: null,
});

const OK_SIMULATION = Object.freeze({
  err: null,
  logs: ['Program 11111111111111111111111111111111 invoke [1]', 'Program 11111111111111111111111111111111 success'],
  accounts: null,
  unitsConsumed: 150,
  returnData: null,
});

const VALIDATORS = [1, 2, 3].map((i) => ({
  identity: new PublicKey(Buffer.alloc(32, 0x40 + i)).toBase58(),
  vote: new PublicKey(Buffer.alloc(32, 0x50 + i)).toBase58(),
  stake: i * 1_000_000_000_000,
  tpuQuic: `127.0.0.1:${8000 + i}`,
}));

export interface FakeUpstream {
  readonly url: string;
  /** The cluster's current slot (what getSlot answers now). */
  currentSlot(): number;
  /** Register the base64 of a correctly signed transaction and how its simulation ends. */
  registerSigned(base64: string, outcome: 'ok' | 'fail'): void;
  /** Calls per method so far. */
  readonly calls: Map<string, number>;
  close(): Promise<void>;
}

export interface FakeUpstreamOptions {
  readonly slotMs: number;
}

function leaderSchedule(slot: number): Record<string, number[]> {
  const first = Math.floor(slot / EPOCH_SLOTS) * EPOCH_SLOTS;
  const out: Record<string, number[]> = {};
  for (const v of VALIDATORS) out[v.identity] = [];
  for (let o = 0; o < EPOCH_SLOTS; o++) {
    const leader = VALIDATORS[Math.floor((first + o) / SLOTS_PER_LEADER) % VALIDATORS.length];
    out[leader.identity].push(o);
  }
  return out;
}

type Answer = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

export async function startFakeUpstream(o: FakeUpstreamOptions): Promise<FakeUpstream> {
  const startedAt = Date.now();
  const signed = new Map<string, 'ok' | 'fail'>();
  const calls = new Map<string, number>();
  const schedules = new Map<number, Record<string, number[]>>();
  const currentSlot = (): number => BASE_SLOT + Math.floor((Date.now() - startedAt) / o.slotMs);
  const context = (): { slot: number; apiVersion: string } => ({ slot: currentSlot(), apiVersion: '2.2.0' });

  function answer(method: string, params: unknown[]): Answer {
    const slot = currentSlot();
    switch (method) {
      case 'getSlot':
        return { result: slot };
      case 'getEpochInfo':
        return {
          result: {
            absoluteSlot: slot,
            epoch: Math.floor(slot / EPOCH_SLOTS),
            slotIndex: slot % EPOCH_SLOTS,
            slotsInEpoch: EPOCH_SLOTS,
            blockHeight: slot,
            transactionCount: 0,
          },
        };
      case 'getLeaderSchedule': {
        const at = typeof params[0] === 'number' ? params[0] : slot;
        const epoch = Math.floor(at / EPOCH_SLOTS);
        let s = schedules.get(epoch);
        if (s === undefined) schedules.set(epoch, (s = leaderSchedule(at)));
        return { result: s };
      }
      case 'getClusterNodes':
        return { result: VALIDATORS.map((v) => ({ pubkey: v.identity, tpuQuic: v.tpuQuic, gossip: null, rpc: null, version: '2.2.0' })) };
      case 'getVoteAccounts':
        return {
          result: {
            current: VALIDATORS.map((v) => ({ nodePubkey: v.identity, votePubkey: v.vote, activatedStake: v.stake, commission: 0, epochVoteAccount: true, lastVote: slot, rootSlot: slot - 32 })),
            delinquent: [],
          },
        };
      case 'simulateTransaction': {
        const cfg = (params[1] ?? {}) as { minContextSlot?: unknown };
        if (typeof cfg.minContextSlot === 'number' && cfg.minContextSlot > slot) {
          return { error: { code: -32016, message: 'Minimum context slot has not been reached', data: { contextSlot: slot } } };
        }
        const verdict = typeof params[0] === 'string' ? signed.get(params[0]) : undefined;
        if (verdict === undefined) return { error: { code: -32003, message: 'Transaction signature verification failure' } };
        return { result: { context: context(), value: verdict === 'ok' ? OK_SIMULATION : FAILED_SIMULATION } };
      }
      case 'sendTransaction':
        return { result: '1111111111111111111111111111111111111111111111111111111111111111' };
      case 'getSignatureStatuses':
        return { result: { context: context(), value: (Array.isArray(params[0]) ? params[0] : []).map(() => null) } };
      case 'isBlockhashValid':
        return { result: { context: context(), value: true } };
      case 'getHealth':
        return { result: 'ok' };
      default:
        return { error: { code: -32601, message: 'Method not found' } };
    }
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: { id?: unknown; method?: unknown; params?: unknown };
      let out: Answer;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
        const method = typeof body.method === 'string' ? body.method : '';
        calls.set(method, (calls.get(method) ?? 0) + 1);
        out = answer(method, Array.isArray(body.params) ? body.params : []);
      } catch {
        body = {};
        out = { error: { code: -32700, message: 'Parse error' } };
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', ...out, id: body.id ?? null }));
    });
  }

  const server: Server = createServer(handle);
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    currentSlot,
    registerSigned: (b64, outcome) => void signed.set(b64, outcome),
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
