// Supervisor (the owner's thread, usually main; cold): keeps ONE run of a thread role going. It spawns a run, takes
// its ready handshake, ends a run not ready within the role's start-up timeout, restarts a run that ended without
// being asked to after an exponential backoff (started over after a stable run), and at stop() gives the run its grace
// before ending it. The policy per role is ./policies.ts; how a run is made is the owner's launch(): a Worker of its
// own (telemetry, status threads) or a long-lived task on a Piscina thread (egress workers, QUIC threads, the QUIC
// ingress): Piscina replaces a dead thread, the supervisor decides when the task runs again.
// Every restart is one log line: {event: 'thread_restart', role, attempt, restartInMs, err, ...the owner's fields}.
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../log/logger.js';
import { RESTART_POLICIES, type RestartPolicy } from './policies.js';
import type { SupervisedRole } from './roles.js';

/** One run of the thread, as its owner's launch() started it. */
export interface SupervisedRun {
  /** Settles when the run ended: fulfilled when it returned (or the thread exited), rejected when it threw. */
  readonly ended: Promise<unknown>;
  /** Ends the run now (Worker.terminate): a start-up timeout, or stop()'s grace over. Absent: it cannot be ended from here. */
  readonly kill?: () => unknown;
}

export interface LaunchContext {
  /** 0 for the first run, then one more per restart. */
  readonly attempt: number;
  /** The run's ready handshake (its first message, its listener bound, its routes warm): call once. */
  readonly ready: () => void;
}

/** What the owner hears when a run ended (before the restart is decided). */
export interface RunEnded {
  readonly attempt: number;
  /** The rejection, or null when the run returned. */
  readonly err: unknown;
  /** stop() asked for it. */
  readonly stopping: boolean;
  readonly wasReady: boolean;
}

export interface SupervisorOptions {
  readonly role: SupervisedRole;
  readonly log: Logger;
  readonly launch: (ctx: LaunchContext) => SupervisedRun;
  /** Overrides of the role's row (configuration, tests). */
  readonly policy?: Partial<RestartPolicy>;
  /** More fields for the restart line (a ring's label, its depth); never a secret. */
  readonly fields?: () => Record<string, unknown>;
  /** The restart line's message (default: "<role> thread ended unexpectedly; restarting it"). */
  readonly message?: string;
  /** The restart line's level (default error; warn for a role whose owner covers for it meanwhile). */
  readonly level?: 'warn' | 'error';
  readonly onEnded?: (ended: RunEnded) => void;
  /** Default true. false: a first run that ends before it is ready is not restarted (the owner reports the failed start). */
  readonly restartIfFirstNeverReady?: boolean;
  /** Unref the restart and start-up timers (a role that must not hold the process open). Default false. */
  readonly unrefTimers?: boolean;
}

export class Supervisor {
  readonly policy: RestartPolicy;
  private run: SupervisedRun | null = null;
  private runReady = false;
  private attempts = 0;
  private consecutive = 0;
  private restartCount = 0;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private startupTimer: NodeJS.Timeout | null = null;
  private readyWaiters: ((ready: boolean) => void)[] = [];

  constructor(private readonly o: SupervisorOptions) {
    this.policy = { ...RESTART_POLICIES[o.role], ...o.policy };
  }

  get role(): SupervisedRole {
    return this.o.role;
  }

  /** Times a run ended without being asked to and was restarted (or is about to be). */
  get restarts(): number {
    return this.restartCount;
  }

  /** A run is up and has done its ready handshake. */
  get ready(): boolean {
    return this.run !== null && this.runReady;
  }

  /** A run is up (ready or not). */
  get running(): boolean {
    return this.run !== null;
  }

  start(): void {
    if (this.run !== null || this.restartTimer !== null || this.stopping) return;
    this.spawn();
  }

  /**
   * Resolves true when the current (or the next) run is ready, false when the first run ended before it was ready and
   * is not restarted (restartIfFirstNeverReady false) or stop() came first.
   */
  whenReady(): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    if (this.stopping) return Promise.resolve(false);
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /**
   * No more restarts; the run gets `graceMs` (default the role's stopGraceMs) to end (the owner asked it to first:
   * a ring's STOP word), then it is killed. Resolves when it ended or was killed.
   */
  async stop(graceMs = this.policy.stopGraceMs): Promise<void> {
    this.stopping = true;
    this.clearTimers();
    this.settleReady(false);
    const run = this.run;
    if (run === null) return;
    const ended = run.ended.then(
      () => true,
      () => true,
    );
    let timer: NodeJS.Timeout | undefined;
    const done = graceMs <= 0 ? false : await Promise.race([ended, new Promise<boolean>((r) => (timer = setTimeout(() => r(false), graceMs)))]);
    clearTimeout(timer);
    if (!done) await run.kill?.();
  }

  private spawn(): void {
    this.restartTimer = null;
    if (this.stopping) return;
    const attempt = this.attempts++;
    const startedAt = Date.now();
    this.runReady = false;
    let run: SupervisedRun | null = null;
    const ready = (): void => {
      // A late handshake of a run already replaced is not this run's.
      if (this.run !== run || run === null || this.runReady) return;
      this.runReady = true;
      this.clearStartup();
      this.settleReady(true);
    };
    // launch() may call ready() synchronously: `run` is set before it can matter, by deferring the check.
    const launched = this.o.launch({ attempt, ready: () => queueMicrotask(ready) });
    run = launched;
    this.run = launched;
    const timeout = this.policy.startupTimeoutMs;
    if (timeout !== null) {
      this.startupTimer = setTimeout(() => {
        this.startupTimer = null;
        if (this.run === launched && !this.runReady) void launched.kill?.(); // ended -> restarted like a crash
      }, timeout);
      if (this.o.unrefTimers === true) this.startupTimer.unref();
    }
    launched.ended.then(
      () => this.ended(launched, attempt, startedAt, null),
      (err: unknown) => this.ended(launched, attempt, startedAt, err),
    );
  }

  private ended(run: SupervisedRun, attempt: number, startedAt: number, err: unknown): void {
    if (this.run !== run) return;
    const wasReady = this.runReady;
    this.run = null;
    this.runReady = false;
    this.clearStartup();
    this.o.onEnded?.({ attempt, err, stopping: this.stopping, wasReady });
    if (this.stopping) return;
    if (attempt === 0 && !wasReady && this.o.restartIfFirstNeverReady === false) {
      this.stopping = true;
      this.settleReady(false);
      return;
    }
    // A run only ends when asked to stop: returning or throwing earlier is a crash either way.
    this.restartCount++;
    const p = this.policy;
    this.consecutive = Date.now() - startedAt >= p.stableMs ? 1 : this.consecutive + 1;
    const delay = Math.min(p.firstBackoffMs * 2 ** (this.consecutive - 1), p.maxBackoffMs);
    this.o.log[this.o.level ?? 'error'](
      { event: 'thread_restart', role: this.o.role, attempt: attempt + 1, restartInMs: delay, ...this.o.fields?.(), err: err === null ? 'returned' : errMessage(err) },
      this.o.message ?? `${this.o.role} thread ended unexpectedly; restarting it`,
    );
    this.restartTimer = setTimeout(() => this.spawn(), delay);
    if (this.o.unrefTimers === true) this.restartTimer.unref();
  }

  private settleReady(ready: boolean): void {
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const w of waiters) w(ready);
  }

  private clearStartup(): void {
    if (this.startupTimer !== null) clearTimeout(this.startupTimer);
    this.startupTimer = null;
  }

  private clearTimers(): void {
    this.clearStartup();
    if (this.restartTimer !== null) clearTimeout(this.restartTimer);
    this.restartTimer = null;
  }
}

/** The run of a Worker of its own: it ends when the thread exits (the exit code is the restart line's err); kill terminates it. */
export function workerRun(w: Worker): SupervisedRun {
  return {
    ended: new Promise((_, reject) => w.once('exit', (code: number) => reject(new Error(`thread exited with code ${code}`)))),
    kill: () => w.terminate(),
  };
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
