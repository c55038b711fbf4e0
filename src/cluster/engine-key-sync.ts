// Keys and plans from the cluster engine (main/front thread, cold: one read script per cluster.keys.pollMs, answering
// only the records changed since the revision this relay has, and a pub/sub wake-up on {ns}:keys:changed). `slotrelay
// keys add|set|remove` (keys-plan-cli.ts) changes {ns}:keys, bumps {ns}:keys:rev and logs the change in one script
// and publishes the revision; every relay then reads the change at once (one engine round trip), or at its next poll
// when the notice was missed (at most pollMs + one round trip). The new entries go into the KeyTable synchronously, between requests: the front never
// waits on the engine and never sees half a change. An engine plan for a key of the config file overrides the config's
// plan until it is removed (the config's plan is then back). While the engine is unreachable the last known engine
// keys stay in force; a relay that finds the registry gone (the engine restarted without its data) writes back what it
// knew, unless another relay did first (key-registry-script.ts).
import type { Redis } from 'ioredis';
import type { KeyEntry, KeyTable } from '../admission/key-table.js';
import type { Logger } from '../log/logger.js';
import { fingerprint, keysChannel, keysKey, keysLogKey, keysRevKey } from './engine-keys.js';
import { errorLabel, type EngineLink } from './engine-link.js';
import { decodeRecord } from './key-plan.js';
import { KEY_READ_SCRIPT, KEY_RESEED_SCRIPT } from './key-registry-script.js';

export interface KeySyncHooks {
  /** A key's entry was replaced (either side may be absent: a new key, a removed one). */
  replaced(previous: KeyEntry | undefined, next: KeyEntry | undefined): void;
  /** Entries changed: re-apply the revocations to them. */
  changed(): void;
  /** The notice said revocations changed (or the notice channel reconnected): read them now. */
  revocationsNotice(): void;
}

export interface KeySyncStatus {
  /** waiting: not read yet (config keys only); synced: the last read succeeded; stale: keeping the last known keys. */
  readonly state: 'waiting' | 'synced' | 'stale';
  readonly engineKeys: number;
  readonly revision: number | null;
  readonly syncedAgoMs: number | null;
  /** Whether the notice channel is subscribed (else changes arrive at the next poll). */
  readonly notices: boolean;
}

/** Per-key log lines after the first load up to this many per change; beyond it one summary line. */
const MAX_KEY_LINES = 20;

export class EngineKeySync {
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private busy = false;
  private again = false;
  /** Revision of the set in force (null: nothing read from the engine yet). */
  private revision: number | null = null;
  /** Hash -> record text in force (what changed is what differs from it; also what a reseed writes back). */
  private readonly records = new Map<string, string>();
  /** Record texts already reported as unusable (one log line each). */
  private readonly badReported = new Set<string>();
  private lastOkMs: number | null = null;
  private failing = false;
  private readonly sub: Redis;
  private subscribed = false;
  readonly counters = { reads: 0, added: 0, changed: 0, removed: 0, invalid: 0, reseeds: 0 };

  constructor(
    private readonly link: EngineLink,
    private readonly keys: KeyTable,
    private readonly ns: string,
    private readonly pollMs: number,
    private readonly log: Logger,
    private readonly hooks: KeySyncHooks,
  ) {
    // A subscribed connection can send nothing else: the notices get their own (same options, own name).
    this.sub = link.redis.duplicate({ connectionName: 'slotrelay-keys', autoResubscribe: false });
    this.sub.on('error', () => undefined); // the limits connection reports the engine's state, once per change
    this.sub.on('ready', () => {
      // (Re)subscribe, then catch up on whatever was published while the channel was down.
      this.sub.subscribe(keysChannel(this.ns)).then(
        () => {
          this.subscribed = true;
          this.kick();
          this.hooks.revocationsNotice();
        },
        () => undefined,
      );
    });
    this.sub.on('close', () => {
      this.subscribed = false;
    });
    this.sub.on('message', (_channel: string, message: string) => this.onNotice(message));
  }

  start(): void {
    this.stopped = false;
    this.sub.connect().catch(() => undefined); // retried by ioredis; 'ready' subscribes
    this.timer = setInterval(() => this.kick(), this.pollMs);
    this.timer.unref();
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.sub.disconnect();
  }

  status(now = Date.now()): KeySyncStatus {
    return {
      state: this.lastOkMs === null ? 'waiting' : this.failing ? 'stale' : 'synced',
      engineKeys: this.keys.engineKeyCount,
      revision: this.revision,
      syncedAgoMs: this.lastOkMs === null ? null : now - this.lastOkMs,
      notices: this.subscribed,
    };
  }

  private onNotice(message: string): void {
    if (message === 'revoked') {
      this.hooks.revocationsNotice();
      return;
    }
    // A revision this relay already has (its own reseed, or a notice overtaken by a poll): nothing to read.
    if (Number(message) !== this.revision) this.kick();
  }

  /** Read now; a read already on its way is followed by another (a notice is never lost to a read in progress). */
  private kick(): void {
    if (this.stopped) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    void this.run();
  }

  private async run(): Promise<void> {
    this.busy = true;
    try {
      do {
        this.again = false;
        if (this.link.state === 'connecting') return; // the first connect has not answered yet: the timer retries
        await this.read();
      } while (this.again && !this.stopped);
    } finally {
      this.busy = false;
    }
  }

  private async read(): Promise<void> {
    try {
      const since = this.revision ?? -1;
      const reply = (await this.link.redis.eval(KEY_READ_SCRIPT, 3, keysKey(this.ns), keysRevKey(this.ns), keysLogKey(this.ns), String(since))) as (number | string)[];
      const revision = Number(reply[0]);
      if (revision < 0) {
        // No registry. Never had one: config keys only. Had one: the engine lost its data; refill it.
        if (this.revision !== null) await this.reseed();
      } else if (revision !== this.revision) {
        const changed = new Map<string, string>();
        for (let i = 2; i + 1 < reply.length; i += 2) changed.set(String(reply[i]), String(reply[i + 1]));
        this.counters.reads++;
        this.apply(revision, changed, Number(reply[1]) === 1);
      }
      this.ok();
    } catch (err) {
      this.fail(err);
    }
  }

  /** `changed`: hash -> record ('' = removed); `full`: every present key (what it lacks is gone). */
  private apply(revision: number, changed: ReadonlyMap<string, string>, full: boolean): void {
    const first = this.revision === null;
    const now = Date.now();
    const lines: { event: string; keyName: string; fingerprint: string; overrides?: boolean }[] = [];
    const gone: string[] = [];
    for (const [hash, text] of changed) {
      if (text === '') {
        gone.push(hash);
        continue;
      }
      if (this.records.get(hash) === text) continue;
      const rec = decodeRecord(text);
      if ('error' in rec) {
        // Unusable (written by hand, or by a newer version): the key keeps what it had here, if anything.
        this.counters.invalid++;
        if (!this.badReported.has(text)) {
          this.badReported.add(text);
          this.log.warn({ event: 'engine_key_invalid', fingerprint: fingerprint(hash), error: rec.error }, `engine key ${fingerprint(hash)}: unusable record (${rec.error}); keeping what this relay had for it`);
        }
        continue;
      }
      const { entry, previous } = this.keys.setEngineKey(hash, rec.plan, now);
      this.hooks.replaced(previous, entry);
      const added = !this.records.has(hash);
      this.records.set(hash, text);
      if (added) this.counters.added++;
      else this.counters.changed++;
      lines.push({ event: added ? 'engine_key_added' : 'engine_key_changed', keyName: entry.name, fingerprint: fingerprint(hash), ...(previous?.source === 'config' ? { overrides: true } : {}) });
    }
    if (full) for (const hash of this.keys.engineHashes()) if (!changed.has(hash)) gone.push(hash);
    for (const hash of gone) {
      const r = this.keys.removeEngineKey(hash);
      this.records.delete(hash);
      if (r === undefined) continue;
      this.hooks.replaced(r.removed, r.fallback);
      this.counters.removed++;
      lines.push({ event: 'engine_key_removed', keyName: r.removed.name, fingerprint: fingerprint(hash) });
    }
    this.revision = revision;
    if (lines.length > 0) this.hooks.changed();
    // Names and fingerprints only, never a key (the logger redacts a field named `key`: the name goes as keyName).
    if (first || lines.length > MAX_KEY_LINES) {
      this.log.info({ event: 'engine_keys_loaded', revision, engineKeys: this.keys.engineKeyCount, changes: lines.length }, `keys from the cluster engine: ${this.keys.engineKeyCount} in force (revision ${revision})`);
    }
    if (lines.length > MAX_KEY_LINES) return;
    for (const l of lines) {
      const what = l.event === 'engine_key_added' ? (l.overrides ? 'overrides the config plan of' : 'added') : l.event === 'engine_key_changed' ? 'changed the plan of' : 'removed';
      this.log.info({ ...l, revision }, `cluster engine ${what} key "${l.keyName}" (${l.fingerprint})`);
    }
  }

  private async reseed(): Promise<void> {
    const pairs: string[] = [];
    for (const [hash, text] of this.records) pairs.push(hash, text);
    const wrote = await this.link.redis.eval(KEY_RESEED_SCRIPT, 3, keysKey(this.ns), keysRevKey(this.ns), keysLogKey(this.ns), String(this.revision), ...pairs);
    if (wrote === 1) {
      this.counters.reseeds++;
      this.log.warn({ event: 'engine_keys_reseeded', engineKeys: this.records.size, revision: this.revision }, `the cluster engine had lost its keys (restarted without persistence?): wrote back the ${this.records.size} this relay knew`);
    } else {
      this.again = true; // another relay (or a keys command) wrote first: read theirs
    }
  }

  private ok(): void {
    this.lastOkMs = Date.now();
    if (!this.failing) return;
    this.failing = false;
    this.log.info({ event: 'engine_keys_synced', engineKeys: this.keys.engineKeyCount, revision: this.revision }, 'keys from the cluster engine read again');
  }

  private fail(err: unknown): void {
    if (this.failing) return;
    this.failing = true;
    const n = this.keys.engineKeyCount;
    this.log.warn(
      { event: 'engine_keys_stale', engineKeys: n, revision: this.revision, error: errorLabel(err) },
      this.revision === null
        ? 'cannot read keys from the cluster engine: config keys only until it answers'
        : `cannot read keys from the cluster engine: keeping the last ${n} known engine keys (revision ${this.revision}) until it answers`,
    );
  }
}
