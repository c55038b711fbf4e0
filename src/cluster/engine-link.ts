// One connection to the cluster engine (Redis 7) and its up/down state (cold; used on the main thread by the budget
// agent and key revocations, and separately on the telemetry thread). Nothing on a request's path ever awaits it:
// callers run on timers and treat a failed command as "engine down". Commands are never queued while disconnected
// (enableOfflineQueue off) and time out after cluster.commandTimeoutMs, so a partitioned or paused engine shows up
// as failures within one timeout instead of a growing queue. One log line per state change; the URL's password and
// database never appear in logs.
import type { Redis } from 'ioredis';
import type { Logger } from '../log/logger.js';
import { redisClass } from './redis-module.js';

export type EngineState = 'connecting' | 'up' | 'down';

/** scheme://host:port of an engine URL: no password, no database, no query. */
export function engineUrlForLog(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.hostname}:${u.port || '6379'}`;
  } catch {
    return '(unparsable URL)';
  }
}

export interface EngineLinkOptions {
  readonly url: string;
  readonly commandTimeoutMs: number;
  /** What this connection is for, in logs and metrics ('limits' | 'telemetry'). */
  readonly part: string;
  readonly log: Logger;
  /** Lua commands to define on the client (name -> script with one key). */
  readonly scripts?: Readonly<Record<string, { readonly numberOfKeys: number; readonly lua: string }>>;
}

/** Reconnect delay: quick first retries, then every 1 s (an engine restart is seen within ~1 s). */
function retryDelay(times: number): number {
  return Math.min(100 * times, 1_000);
}

export class EngineLink {
  readonly redis: Redis;
  private stateNow: EngineState = 'connecting';
  private lastError: string | null = null;
  private changedAt = Date.now();
  /** State changes since start (metrics). */
  transitions = 0;
  failures = 0;

  constructor(private readonly o: EngineLinkOptions) {
    const RedisClient = redisClass();
    this.redis = new RedisClient(o.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: o.commandTimeoutMs,
      connectTimeout: Math.max(1_000, o.commandTimeoutMs),
      retryStrategy: retryDelay,
      // Our own names in CLIENT LIST: which part of which relay holds a connection.
      connectionName: `slotrelay-${o.part}`,
    });
    for (const [name, s] of Object.entries(o.scripts ?? {})) this.redis.defineCommand(name, s);
    // ioredis emits 'error' on every failed (re)connect; the state change is what we log, once.
    this.redis.on('error', (err: Error) => this.markDown(err));
    this.redis.on('ready', () => this.markUp());
    this.redis.on('close', () => this.markDown(new Error(this.lastError ?? 'connection closed')));
  }

  start(): void {
    this.o.log.info({ event: 'cluster_engine_connecting', part: this.o.part, engine: engineUrlForLog(this.o.url) }, 'connecting to the cluster engine');
    this.redis.connect().catch((err: unknown) => this.markDown(err));
  }

  get state(): EngineState {
    return this.stateNow;
  }

  get up(): boolean {
    return this.stateNow === 'up';
  }

  /** Milliseconds since the last state change. */
  sinceChangeMs(now = Date.now()): number {
    return now - this.changedAt;
  }

  get error(): string | null {
    return this.stateNow === 'up' ? null : this.lastError;
  }

  /** A command answered: the engine is reachable (also after a pause that did not drop the connection). */
  markUp(): void {
    if (this.stateNow === 'up') return;
    this.set('up');
    this.o.log.info({ event: 'cluster_engine_up', part: this.o.part, engine: engineUrlForLog(this.o.url) }, `cluster engine reachable (${this.o.part}): shared mode`);
  }

  /** A command failed or the connection dropped: local mode until a command succeeds again. */
  markDown(err: unknown): void {
    this.failures++;
    this.lastError = errorLabel(err);
    if (this.stateNow === 'down') return;
    this.set('down');
    this.o.log.warn(
      { event: 'cluster_engine_down', part: this.o.part, engine: engineUrlForLog(this.o.url), error: this.lastError },
      `cluster engine unreachable (${this.o.part}): serving on local ${this.o.part === 'limits' ? 'limits' : 'telemetry'} until it is back`,
    );
  }

  private set(s: EngineState): void {
    this.stateNow = s;
    this.changedAt = Date.now();
    this.transitions++;
  }

  async stop(): Promise<void> {
    this.redis.removeAllListeners('close');
    this.redis.removeAllListeners('ready');
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}

/** A short, secret-free label for an engine error (codes and ioredis messages; never a URL). */
export function errorLabel(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'string') return e.code;
  const m = typeof e?.message === 'string' ? e.message : String(err);
  if (/timed? ?out/i.test(m)) return 'timeout';
  if (/enableOfflineQueue|writeable|Connection is closed/i.test(m)) return 'not_connected';
  // A server's reply can quote a command's argument (a key name, a plan holding an API key): any word shaped like a
  // token (a run of 8 hex characters, as UUIDs have, or 24+ characters of base58/base64url) is replaced.
  return m
    .replace(/rediss?:\/\/\S*/g, '(url)')
    .replace(/[A-Za-z0-9_+/=-]*(?:[0-9a-f]{8}|[A-Za-z0-9_+/=-]{24})[A-Za-z0-9_+/=-]*/gi, '(token)')
    .slice(0, 120);
}
