// What the facade's method handlers see (localnet process, main thread; built once, cold), plus the helpers every
// method shares: commitment -> slot, the {context, value} wrapper, Agave-worded parameter errors.
import { Errors, RelayError, type ErrorSpec } from '../../errors/registry.js';
import type { SlotLoadLog } from '../slot-load.js';
import { configObject, optionalCommitment, optionalUsize, type Commitment } from '../../jsonrpc/params.js';
import type { Bank } from '../bank.js';
import type { BlockProducer } from '../block-producer.js';
import type { Consensus } from '../consensus.js';
import type { BlockIndex } from './get-block.js';
import type { ArrivalLog } from '../arrival-log.js';
import type { LandingLog } from '../landings.js';
import type { LeaderSchedule } from '../leader-schedule.js';
import type { PrioritizationFees } from '../prioritization-fees.js';
import type { SlotClock } from '../slot-clock.js';
import type { TpuGate } from '../tpu-gate.js';
import bs58 from 'bs58';

/** The version the facade reports (getVersion / getClusterNodes): an Agave 2.2-compatible node. */
export const LOCALNET_SOLANA_CORE_VERSION = '2.2.0';
export const LOCALNET_FEATURE_SET = 3_294_202_862;
/** Agave's RPC API version reported in every context. */
export const API_VERSION = '2.2.0';

export interface FacadeValidator {
  readonly identity: string;
  readonly votePubkey: string;
  readonly stake: bigint;
  /** "127.0.0.1:port" of its TPU QUIC listener. */
  readonly tpuQuic: string;
  /** "host:port" of its plain UDP TPU port (Firedancer), null or absent for none. */
  readonly tpu?: string | null;
  /** What getClusterNodes reports as its version; absent = LOCALNET_SOLANA_CORE_VERSION (Agave). */
  readonly version?: string;
}

/** Hands a transaction to the TPU path the way a plain RPC node's send-transaction service does. */
/** `maxRetries`: the request's; absent = the service's default (docs/localnet.md "Network model"). */
export type TpuSender = (tx: Uint8Array, signature: string, maxRetries?: number) => Promise<void>;

export interface FacadeContext {
  /** Per-slot leader load (localnet_getSlotLoad); absent in contexts built without it (tests). */
  readonly slotLoad?: SlotLoadLog;
  readonly bank: Bank;
  readonly producer: BlockProducer;
  readonly schedule: LeaderSchedule;
  readonly clock: SlotClock;
  readonly gate: TpuGate;
  readonly fees: PrioritizationFees;
  readonly landings: LandingLog;
  /** Every TPU arrival (benches; localnet.arrivalLog), null when off. */
  readonly arrivals: ArrivalLog | null;
  readonly validators: readonly FacadeValidator[];
  /** Which slot each commitment stands at, skips, block height (Alpenglow or Tower BFT: src/localnet/consensus.ts). */
  readonly consensus: Consensus;
  /** slot -> committed signatures (getBlock); absent in contexts built without it (tests). */
  readonly blocks?: BlockIndex;
  readonly maxTransactionBytes: number;
  /** host:port of the facade itself (getClusterNodes rpc/pubsub of the first validator). */
  rpcAddress: string;
  /** host:port+1 (PubSub). */
  pubsubAddress: string;
  sendToTpu: TpuSender;
}

/** Agave codes the error registry does not carry (kit understands -32001..-32021). */
export const MIN_CONTEXT_SLOT_NOT_REACHED: ErrorSpec = Object.freeze({
  id: 1016,
  reason: 'min_context_slot_not_reached',
  rpcCode: -32016,
  rpcHttpStatus: 200,
  restHttpStatus: 400,
  message: 'Minimum context slot has not been reached',
});
export const TRANSACTION_HISTORY_NOT_AVAILABLE: ErrorSpec = Object.freeze({
  id: 1011,
  reason: 'transaction_history_not_available',
  rpcCode: -32011,
  rpcHttpStatus: 200,
  restHttpStatus: 400,
  message: 'Transaction history is not available from this node',
});

export function invalidParams(message: string, data?: unknown): RelayError {
  return new RelayError(Errors.INVALID_PARAMS, message, data);
}

export function slotAt(ctx: FacadeContext, commitment: Commitment | undefined): number {
  return ctx.consensus.slotAt(commitment);
}

export interface CommonConfig {
  readonly commitment: Commitment | undefined;
  readonly slot: number;
  readonly raw: Record<string, unknown>;
}

/** commitment + minContextSlot of a config object; throws -32016 when minContextSlot is ahead. */
export function commonConfig(ctx: FacadeContext, value: unknown): CommonConfig {
  const raw = configObject(value) ?? {};
  const commitment = optionalCommitment(raw.commitment, 'commitment');
  const slot = slotAt(ctx, commitment);
  const min = optionalUsize(raw.minContextSlot, 'minContextSlot');
  if (min !== undefined && min > slot) throw new RelayError(MIN_CONTEXT_SLOT_NOT_REACHED, MIN_CONTEXT_SLOT_NOT_REACHED.message, { contextSlot: slot });
  return { commitment, slot, raw };
}

export function withContext(slot: number, value: unknown): string {
  return JSON.stringify({ context: { apiVersion: API_VERSION, slot }, value });
}

/** Agave verify_pubkey: "Invalid param: WrongSize" / "Invalid param: Invalid". */
export function pubkeyParam(v: unknown): { text: string; bytes: Uint8Array } {
  if (typeof v !== 'string') throw invalidParams(`Invalid params: invalid type: ${v === null ? 'null' : typeof v}, expected a string`);
  if (v.length > 44) throw invalidParams('Invalid param: WrongSize');
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(v);
  } catch {
    throw invalidParams('Invalid param: Invalid');
  }
  if (bytes.length !== 32) throw invalidParams('Invalid param: WrongSize');
  return { text: v, bytes };
}
