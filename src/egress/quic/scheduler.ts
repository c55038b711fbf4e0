// The fanout scheduler (QUIC thread; targets() is HOT but recomputes only when the slot changes). Decides which
// leaders get a transaction and which connections to open ahead of time (Agave tpu-client-next
// connection_workers_scheduler.rs; Yellowstone Jet SmartFanout). Policies:
//   next-leaders   the current leader and the next `leaders` distinct leaders, in every slot (Agave's fixed fanout)
//   window-aware   the current leader; when the current leader has at most `windowTailSlots` slots left (slots 2-3
//                  of a 4-slot window by default), also the next `leaders` distinct leaders (Jet SmartFanout)
// Pre-warm set: the distinct leaders of the current window and the next `lookahead` windows (Jet: 4; Agave: N+1),
// a superset of every target in those slots, so no handshake lands on a transaction's path.
// Adaptive routing (docs/adaptive-routing.md): a slot whose leader parks the relay gets `extra` more next leaders from
// the front's widen table (src/shm/widen-layout.ts), in every slot of it (window-aware's tail rule does not apply).
// Several producers per slot (issue #44 item 5; one per slot from every source today): `producers: all` sends to each
// producer of a chosen slot, `first` to its leader alone; the pre-warm set holds whatever the targets may hold.
// Leaders with no advertised tpuQuic are skipped (counted); stale or missing leader data gives no target at all
// (the route answers dropped:no_leader: fail closed rather than guess).
import { NUM_CONSECUTIVE_LEADER_SLOTS, type LeaderInfo, type LeaderSource } from '../../telemetry/leader-source.js';

import type { FanoutPolicy, ProducerPolicy } from '../../config/fanout-policy.js';

export type { FanoutPolicy, ProducerPolicy };

export interface SchedulerOptions {
  readonly fanout: FanoutPolicy;
  /** A slot with several producers: all of them, or its leader alone. Default all. */
  readonly producers?: ProducerPolicy;
  /** Leaders after the current one that get a transaction (when the policy includes them). */
  readonly leaders: number;
  /** window-aware: how many final slots of the current leader's run also go to the next leaders. */
  readonly windowTailSlots: number;
  /** Leader windows ahead whose connections are kept open. */
  readonly lookahead: number;
  /** Leader data older than this answers no targets. */
  readonly staleLeaderMs: number;
  /** The adaptive widen table's reader (src/shm/widen-layout.ts); absent = the policy alone. */
  readonly widen?: { generation(): number; extraFor(slot: number): number };
}

export interface Target {
  /** "ip:port" of the TPU QUIC port: the connection cache key. */
  readonly target: string;
  /** Validator identity (base58). */
  readonly identity: string;
}

const NONE: readonly Target[] = Object.freeze([]);
/** How far ahead we look for distinct leaders (windows); a validator rarely holds more than a few in a row. */
const MAX_SCAN_WINDOWS = 64;

export interface SchedulerCounters {
  /** Recomputations (one per slot seen). */
  recomputed: number;
  /** Leaders that had to be skipped because the cluster advertises no tpuQuic for them. */
  leadersWithoutTpu: number;
}

export class Scheduler {
  private slot = -2;
  /** The widen table's generation the cached targets were computed with. */
  private widenGeneration = 0;
  private cached: readonly Target[] = NONE;
  private warmWindow = -1;
  private warm: readonly Target[] = NONE;
  readonly counters: SchedulerCounters = { recomputed: 0, leadersWithoutTpu: 0 };

  constructor(
    private readonly source: LeaderSource,
    private readonly o: SchedulerOptions,
  ) {}

  /** Hot: where a transaction goes right now. Empty = no usable leader data. */
  targets(): readonly Target[] {
    const slot = this.source.currentSlot();
    if (slot < 0 || this.source.ageMs() > this.o.staleLeaderMs) return NONE;
    const gen = this.o.widen === undefined ? 0 : this.o.widen.generation();
    if (slot !== this.slot || gen !== this.widenGeneration) {
      this.slot = slot;
      this.widenGeneration = gen;
      this.cached = this.compute(slot);
      this.counters.recomputed++;
    }
    return this.cached;
  }

  /** The slot the last targets() call computed for (the current leader's slot), -2 before the first. */
  get currentSlot(): number {
    return this.slot;
  }

  /**
   * Connections to keep open now (current window + `lookahead` windows ahead), or null when unchanged since the
   * last call (the caller then has nothing to do).
   */
  prewarmTargets(): readonly Target[] | null {
    const slot = this.source.currentSlot();
    if (slot < 0 || this.source.ageMs() > this.o.staleLeaderMs) return null;
    const window = slot - (slot % NUM_CONSECUTIVE_LEADER_SLOTS);
    if (window === this.warmWindow) return null;
    const out = new Map<string, Target>();
    for (let k = 0; k <= this.o.lookahead; k++) this.addSlot(out, window + k * NUM_CONSECUTIVE_LEADER_SLOTS, this.source.leaderAt(window + k * NUM_CONSECUTIVE_LEADER_SLOTS));
    // Also whatever the fanout policy can pick in this window (next-leaders may reach further than lookahead).
    for (const t of this.compute(window + NUM_CONSECUTIVE_LEADER_SLOTS - 1)) out.set(t.target, t);
    if (out.size === 0) return null; // schedule not known yet: try again next time
    this.warmWindow = window;
    this.warm = Object.freeze([...out.values()]);
    return this.warm;
  }

  /** Targets for `slot` under the configured policy (pure given the source; unit-tested). */
  compute(slot: number): readonly Target[] {
    const cur = this.source.leaderAt(slot);
    if (cur === undefined) return NONE;
    const out = new Map<string, Target>();
    this.addSlot(out, slot, cur);
    const widened = this.o.widen === undefined ? 0 : this.o.widen.extraFor(slot);
    let extra = this.o.leaders + widened;
    if (extra > 0 && widened === 0 && this.o.fanout === 'window-aware') {
      // Slots the current leader still holds, including this one (consecutive windows of the same leader count).
      const change = this.nextLeaderChange(slot, cur.identity);
      if (change < 0 || change - slot > this.o.windowTailSlots) extra = 0;
    }
    if (extra > 0) {
      let s = slot - (slot % NUM_CONSECUTIVE_LEADER_SLOTS);
      let last = cur.identity;
      for (let w = 0; w < MAX_SCAN_WINDOWS && extra > 0; w++) {
        s += NUM_CONSECUTIVE_LEADER_SLOTS;
        const l = this.source.leaderAt(s);
        if (l === undefined) break;
        if (l.identity === last || l.identity === cur.identity) continue;
        last = l.identity;
        if (this.addSlot(out, s, l)) extra--;
      }
    }
    return out.size === 0 ? NONE : Object.freeze([...out.values()]);
  }

  /** First slot after `slot` not led by `identity`, or -1 when the schedule does not reach it. */
  private nextLeaderChange(slot: number, identity: string): number {
    let s = slot - (slot % NUM_CONSECUTIVE_LEADER_SLOTS) + NUM_CONSECUTIVE_LEADER_SLOTS;
    for (let w = 0; w < MAX_SCAN_WINDOWS; w++, s += NUM_CONSECUTIVE_LEADER_SLOTS) {
      const l = this.source.leaderAt(s);
      if (l === undefined) return -1;
      if (l.identity !== identity) return s;
    }
    return -1;
  }

  /** The producers of `slot` the policy sends to (`leader` is leaderAt(slot), already read); true if any was added. */
  private addSlot(out: Map<string, Target>, slot: number, leader: LeaderInfo | undefined): boolean {
    if (leader === undefined) return false;
    const producers = this.o.producers !== 'first' ? this.source.producersAt?.(slot) : undefined;
    if (producers === undefined || producers.length <= 1) return this.add(out, leader);
    let added = false;
    for (const p of producers) if (this.add(out, p)) added = true;
    return added;
  }

  private add(out: Map<string, Target>, l: LeaderInfo | undefined): boolean {
    if (l === undefined) return false;
    if (l.tpuQuic === null) {
      this.counters.leadersWithoutTpu++;
      return false;
    }
    if (out.has(l.tpuQuic)) return false;
    out.set(l.tpuQuic, { target: l.tpuQuic, identity: l.identity });
    return true;
  }
}
