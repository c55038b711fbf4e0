// Which slot source leads the telemetry thread (telemetry thread; per slot, cold): the Geyser stream when it is up
// and keeping pace, else PubSub's slotSubscribe, else getSlot polling. All of them feed the follower (it takes the
// highest slot, so the fastest source wins slot by slot and a fallback needs no hand-over); this says which one the
// relay is standing on, for the log (one line per switch), the counters and /health, the status page and doctor.
// The stream lags when PubSub has announced a slot lagSlots or more ahead of the newest the stream gave.
import type { GeyserStreamState } from './geyser-slot-stream.js';

export const SLOT_SOURCES = ['grpc', 'pubsub', 'poll'] as const;
export type SlotSourceName = (typeof SLOT_SOURCES)[number];

/** What the telemetry thread posts to the main thread (the `type` tells it from the other messages). */
export interface SlotSourceStatus {
  readonly type: 'slot-source';
  readonly active: SlotSourceName;
  /** Why the active source is not grpc (null when it is, or when no stream is configured). */
  readonly reason: string | null;
  /** Switches into each source since the thread started. */
  readonly switches: Readonly<Record<SlotSourceName, number>>;
  readonly grpc: {
    readonly state: GeyserStreamState['kind'];
    readonly lastSlot: number | null;
    /** Slots the stream's newest is behind the newest slot any source gave (0 when it leads). */
    readonly behindSlots: number | null;
    /** Updates received. */
    readonly updates: number;
  } | null;
}

export function isSlotSourceStatus(m: unknown): m is SlotSourceStatus {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'slot-source';
}

export class SlotSourceSelector {
  private active: SlotSourceName;
  private reason: string | null = null;
  private grpcState: GeyserStreamState['kind'] = 'connecting';
  private grpcSlot = -1;
  private pubsubSlot = -1;
  private pubsubUp = false;
  private readonly switches: Record<SlotSourceName, number> = { grpc: 0, pubsub: 0, poll: 0 };

  constructor(
    private readonly grpcConfigured: boolean,
    private readonly lagSlots: number,
    private readonly onSwitch: (from: SlotSourceName, to: SlotSourceName, reason: string | null) => void,
    private updates: () => number = () => 0,
  ) {
    this.active = 'poll';
  }

  get current(): SlotSourceName {
    return this.active;
  }

  grpcStateChanged(kind: GeyserStreamState['kind']): void {
    this.grpcState = kind;
    this.decide();
  }

  pubsubStateChanged(up: boolean): void {
    this.pubsubUp = up;
    this.decide();
  }

  grpcSlotSeen(slot: number): void {
    if (slot > this.grpcSlot) this.grpcSlot = slot;
    this.decide();
  }

  pubsubSlotSeen(slot: number): void {
    if (slot > this.pubsubSlot) this.pubsubSlot = slot;
    this.decide();
  }

  /** A new cluster (the slot went far back): forget the slots seen. */
  reset(): void {
    this.grpcSlot = -1;
    this.pubsubSlot = -1;
  }

  status(): SlotSourceStatus {
    const newest = Math.max(this.grpcSlot, this.pubsubSlot);
    return {
      type: 'slot-source',
      active: this.active,
      reason: this.reason,
      switches: { ...this.switches },
      grpc: this.grpcConfigured
        ? { state: this.grpcState, lastSlot: this.grpcSlot < 0 ? null : this.grpcSlot, behindSlots: this.grpcSlot < 0 ? null : newest - this.grpcSlot, updates: this.updates() }
        : null,
    };
  }

  private decide(): void {
    let next: SlotSourceName;
    let reason: string | null = null;
    const lagging = this.grpcSlot >= 0 && this.pubsubSlot - this.grpcSlot >= this.lagSlots;
    if (this.grpcConfigured && this.grpcState === 'up' && !lagging) next = 'grpc';
    else {
      if (this.grpcConfigured) reason = this.grpcState === 'up' ? 'grpc_lagging' : `grpc_${this.grpcState}`;
      next = this.pubsubUp ? 'pubsub' : 'poll';
    }
    this.reason = reason;
    if (next === this.active) return;
    const from = this.active;
    this.active = next;
    this.switches[next]++;
    this.onSwitch(from, next, reason);
  }
}
