// The soak's fault schedule and its execution (driver process, cold: a handful of events per run). Faults, spread
// evenly between a warm-up and a quiet tail:
//   kill_localnet   SIGKILL the relay's embedded localnet child (the relay restarts it on the same port)
//   jito_outage     SIGKILL the jito block-engine stand-in, start it again on the same port after `outageS`
//   static_outage   the same for the static QUIC peer
//   all_outage      jito and static down and the localnet killed at once: for a moment no route can deliver
// A run of 300 s or more gets the seven-fault cycle below (about 75 s apart at 600 s, 25 s outages); a shorter run
// (the smoke test) one of each of the first three.
import type { RelayChild } from './relay-child.js';
import { killLocalnetPid, sleep } from './relay-child.js';
import type { StandIn } from './stand-ins.js';

export type FaultKind = 'kill_localnet' | 'jito_outage' | 'static_outage' | 'all_outage';

export interface PlannedFault {
  readonly atS: number;
  readonly kind: FaultKind;
  /** How long a stopped stand-in stays down (the localnet's outage is its own restart time). */
  readonly outageS: number;
}

export interface FaultPlan {
  readonly warmupS: number;
  readonly quietTailS: number;
  readonly faults: readonly PlannedFault[];
}

const LONG_CYCLE: readonly FaultKind[] = ['kill_localnet', 'jito_outage', 'static_outage', 'kill_localnet', 'jito_outage', 'static_outage', 'all_outage'];
const SHORT_CYCLE: readonly FaultKind[] = ['kill_localnet', 'jito_outage', 'static_outage'];
const LONG_RUN_S = 300;
/** How long to wait for the relay to report the restarted localnet (its supervisor backs off 0.5 s first). */
const LOCALNET_RESTART_WAIT_MS = 60_000;

export function planFaults(seconds: number): FaultPlan {
  const long = seconds >= LONG_RUN_S;
  const warmupS = long ? 30 : Math.max(5, Math.round(seconds * 0.12));
  const quietTailS = long ? 45 : Math.max(5, Math.round(seconds * 0.15));
  const kinds = long ? LONG_CYCLE : SHORT_CYCLE;
  const spacing = (seconds - warmupS - quietTailS) / kinds.length;
  const outageS = Math.max(3, Math.min(25, Math.floor(spacing * 0.6)));
  const faults = kinds.map((kind, i) => ({ atS: Math.round((warmupS + i * spacing) * 10) / 10, kind, outageS }));
  return { warmupS, quietTailS, faults };
}

export interface FaultRecord {
  readonly kind: FaultKind;
  readonly plannedAtS: number;
  atS: number;
  /** localnet pid killed (kill_localnet, all_outage), or null when none was running. */
  localnetPid?: number | null;
  /** Seconds from the kill to the relay's `localnet_restarted` line (null: not seen within the wait). */
  localnetBackAfterS?: number | null;
  /** Seconds the stand-in(s) were down. */
  downS?: number;
  error?: string;
}

export interface FaultTargets {
  readonly relay: RelayChild;
  readonly jito: StandIn;
  readonly staticPeer: StandIn;
  /** Seconds since the load started. */
  readonly now: () => number;
}

export class FaultRunner {
  readonly records: FaultRecord[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Set<Promise<void>>();
  private cancelled = false;

  constructor(private readonly t: FaultTargets) {}

  /** Schedule every fault relative to now (the load's start). */
  schedule(plan: FaultPlan): void {
    for (const f of plan.faults) {
      const timer = setTimeout(() => {
        const p = this.run(f).catch((err: unknown) => {
          this.records.push({ kind: f.kind, plannedAtS: f.atS, atS: this.t.now(), error: err instanceof Error ? err.message : String(err) });
        });
        this.running.add(p);
        void p.finally(() => this.running.delete(p));
      }, f.atS * 1000);
      this.timers.push(timer);
    }
  }

  /** Cancel what has not started, let running faults restore their peers (bounded), then make sure both are up. */
  async finish(timeoutMs: number): Promise<void> {
    this.cancelled = true;
    for (const t of this.timers) clearTimeout(t);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.running]), new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
  }

  private async run(f: PlannedFault): Promise<void> {
    const rec: FaultRecord = { kind: f.kind, plannedAtS: f.atS, atS: this.t.now() };
    this.records.push(rec);
    const stopPeers = f.kind === 'jito_outage' ? [this.t.jito] : f.kind === 'static_outage' ? [this.t.staticPeer] : f.kind === 'all_outage' ? [this.t.jito, this.t.staticPeer] : [];
    const killLocalnet = f.kind === 'kill_localnet' || f.kind === 'all_outage';
    const downAt = Date.now();
    await Promise.all(stopPeers.map((p) => p.stop('SIGKILL')));
    const localnetBack = killLocalnet ? this.killLocalnet(rec) : Promise.resolve();
    if (stopPeers.length > 0) {
      // Sleep in short steps so finish() does not wait a whole outage after the load ended.
      const until = downAt + f.outageS * 1000;
      while (Date.now() < until && !this.cancelled) await sleep(Math.min(250, until - Date.now()));
      for (const p of stopPeers) await p.start();
      rec.downS = Math.round((Date.now() - downAt) / 100) / 10;
    }
    await localnetBack;
  }

  private async killLocalnet(rec: FaultRecord): Promise<void> {
    const pid = this.t.relay.localnetPid;
    rec.localnetPid = pid;
    if (pid === null) return;
    const killedAt = Date.now();
    const before = this.t.relay.localnetPids.length;
    if (!killLocalnetPid(pid, 'SIGKILL')) {
      rec.error = `localnet pid ${pid} is not a running localnet`;
      return;
    }
    const until = killedAt + LOCALNET_RESTART_WAIT_MS;
    while (this.t.relay.localnetPids.length === before && Date.now() < until && this.t.relay.exit === null) await sleep(100);
    rec.localnetBackAfterS = this.t.relay.localnetPids.length > before ? Math.round((Date.now() - killedAt) / 100) / 10 : null;
  }
}
