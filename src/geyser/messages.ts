// The fields of geyser.proto's messages that slotrelay reads or writes (types only; any thread, no code). The
// definition itself is the vendored proto (src/geyser/proto.ts); these are the shapes proto-loader gives with its
// options there: uint64 as decimal strings, enums as numbers, bytes as Buffer, absent optionals undefined or null.
import type { CommitmentCode, SlotStatusCode } from './proto.js';

export interface TxFilter {
  readonly vote?: boolean | null;
  readonly failed?: boolean | null;
  readonly signature?: string | null;
  readonly accountInclude?: readonly string[];
  readonly accountExclude?: readonly string[];
  readonly accountRequired?: readonly string[];
}

export interface SlotsFilter {
  readonly filterByCommitment?: boolean | null;
  readonly interslotUpdates?: boolean | null;
}

export interface SubscribeRequest {
  readonly accounts?: Readonly<Record<string, unknown>>;
  readonly slots?: Readonly<Record<string, SlotsFilter>>;
  readonly transactions?: Readonly<Record<string, TxFilter>>;
  readonly transactionsStatus?: Readonly<Record<string, TxFilter>>;
  readonly blocks?: Readonly<Record<string, unknown>>;
  readonly blocksMeta?: Readonly<Record<string, unknown>>;
  readonly entry?: Readonly<Record<string, unknown>>;
  readonly commitment?: CommitmentCode | null;
  readonly ping?: { readonly id: number } | null;
  readonly fromSlot?: string | null;
}

export interface SlotUpdate {
  readonly slot: string;
  readonly parent?: string | null;
  readonly status: SlotStatusCode;
}

export interface TxStatusUpdate {
  readonly slot: string;
  readonly signature: Buffer;
  readonly isVote: boolean;
  readonly index: string;
  readonly err?: { readonly err: Buffer } | null;
}

export interface TxUpdate {
  readonly slot: string;
  readonly transaction: {
    readonly signature: Buffer;
    readonly isVote: boolean;
    readonly index: string;
    readonly meta?: { readonly err?: { readonly err: Buffer } | null } | null;
  };
}

/** A SubscribeUpdate as received (updateOneof names the one field set). */
export interface SubscribeUpdate {
  readonly filters: readonly string[];
  readonly updateOneof?: string;
  readonly slot?: SlotUpdate | null;
  readonly transaction?: TxUpdate | null;
  readonly transactionStatus?: TxStatusUpdate | null;
  readonly blockMeta?: { readonly slot: string; readonly blockhash: string } | null;
  readonly ping?: object | null;
  readonly pong?: { readonly id: number } | null;
}
