// The messages between the main thread's landing tracker and the telemetry thread's Geyser stream (both threads;
// cold: one watch per landing poll, one landed message per watched transaction, one dead message per skipped slot). Plain objects (structured clone).
import type { TxErrorJson } from '../../geyser/tx-error-codec.js';

/** main -> telemetry: the signatures the landing tracker waits on now (the whole set, replacing the last). */
export interface GeyserWatch {
  readonly type: 'geyser-watch';
  readonly signatures: readonly string[];
}

/** telemetry -> main: a watched signature executed in `slot` (err null = succeeded), as the stream told it. */
export interface GeyserLanded {
  readonly type: 'geyser-landed';
  readonly signature: string;
  readonly slot: number;
  readonly err: TxErrorJson | null;
}

/** telemetry -> main: the stream called `slot` dead (SLOT_DEAD: skipped, no block), for the receipts' skip detector. */
export interface GeyserDead {
  readonly type: 'geyser-dead';
  readonly slot: number;
}

export function isGeyserWatch(m: unknown): m is GeyserWatch {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'geyser-watch' && Array.isArray((m as GeyserWatch).signatures);
}

export function isGeyserLanded(m: unknown): m is GeyserLanded {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'geyser-landed';
}

export function isGeyserDead(m: unknown): m is GeyserDead {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'geyser-dead' && typeof (m as GeyserDead).slot === 'number';
}
