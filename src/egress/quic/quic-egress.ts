// What the direct and static routes share (QUIC thread; cold setup): the relay
// identity certificate and ONE connection cache, so a static peer that is also a leader gets one connection, not two.
// The identity comes from main (src/egress/quic/identity.ts): a generated one as its secret in the worker's task (in
// memory only), a configured one as identity.keypairPath. Hot-swap (configured file only): every
// identity.reloadCheckMs the keypair file is stat'ed (fs.watchFile); when it changed and holds another keypair, the
// cache switches certificate (new connections use it, open ones are cycled) and `identity_changed` is logged. An
// unreadable file keeps the current identity (logged).
// The fanout of one transaction over several connections is its own module (./fanout.ts).
// The connection layer (and with it the quiche binding) is imported when the cache is built, not with this module: an
// egress worker that imports the consumer loop but builds no QUIC route never loads the binding (only the quic-egress thread
// does: src/config/route-plan.ts).
import { unwatchFile, watchFile, type Stats } from 'node:fs';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import type { IdentityCertificate } from '../../quic/identity-certificate.js';
import type { ConnectionCache } from './connection-cache.js';
import { generateKeypairSecret, loadIdentityCertificate, readKeypairFile } from './identity.js';
import { createIdentityCertificate } from '../../quic/identity-certificate.js';
import { base58Encode } from '../../quic/base58.js';
import { fromConnectionReports, postRouteMeasurements } from '../../telemetry/measurements.js';
import type { MessagePort } from 'node:worker_threads';
import type { QuicLink } from '../../shm/quic-link-layout.js';
import type { Connections } from './connections.js';
import { ShardedConnections } from './sharded-connections.js';
import type { QuicLinkEnd } from './quic-link.js';
import { STALE_SLOTS, slotTimer } from '../contract/slot-timers.js';
import { FALLBACK_SLOT_MS } from '../../telemetry/slot-duration.js';

/** How often connection measurements go to the telemetry thread (its publish cadence is one slot). */
const MEASUREMENT_REPORT_MS = 1_000;

export interface QuicEgressOptions {
  /** A generated identity's secret from main (EgressTask.identitySecret); wins over identity.keypairPath. */
  readonly identitySecret?: Uint8Array;
  /** Bench hook: every send latency sample, microseconds. */
  readonly onSendLatency?: (us: number) => void;
  /** This thread's counter region: the cache's gauges are written there once a second (ConnectionCache.writeGauges). */
  readonly gauges?: Float64Array;
  /**
   * QUIC thread 0 of several (rings.quicThreads > 1): the links to threads 1..N-1. The routes' connections then
   * route each target to its owner (./connections.ts ShardedConnections); this thread's cache holds its own only.
   */
  readonly links?: readonly QuicLink[];
  /** The cluster's slot duration now, ms (src/telemetry/slot-ms.ts): the stale bound when staleAfterMs is unset. */
  readonly slotMs?: () => number;
}

/** How often the connection cache's gauges reach the counter region (ms). */
const GAUGE_WRITE_MS = 1_000;

export class QuicEgress {
  /** This thread's connections. Null until the identity certificate is built (a few ms after the worker starts). */
  cache: ConnectionCache | null = null;
  /** What the routes send through: the cache itself, or every QUIC thread's connections (links). Null until ready. */
  connections: Connections | null = null;
  private linkEnds: QuicLinkEnd[] = [];
  identity: IdentityCertificate | null = null;
  readonly ready: Promise<ConnectionCache>;
  private closed = false;
  private reportTimer: NodeJS.Timeout | null = null;
  private gaugeTimer: NodeJS.Timeout | null = null;
  private watchedPath: string | null = null;
  private reloading = false;

  constructor(
    config: Readonly<Config>,
    private readonly log: Logger,
    options: QuicEgressOptions = {},
  ) {
    const d = config.routes.direct;
    const staleAfterMs = slotTimer(d.staleAfterMs, STALE_SLOTS, options.slotMs ?? (() => FALLBACK_SLOT_MS));
    const onSendLatency = options.onSendLatency;
    const secret = options.identitySecret;
    // The configured file is watched only when it is the identity in use (not when main generated one in memory).
    const path = secret === undefined ? config.identity.keypairPath : undefined;
    const cert =
      secret !== undefined
        ? createIdentityCertificate(secret)
        : path !== undefined
          ? loadIdentityCertificate(path)
          : createIdentityCertificate(generateKeypairSecret()).then((c) => {
              log.warn({ identity: c.identity }, 'egress: no relay identity reached this worker: using a generated UNSTAKED identity of its own');
              return c;
            });
    this.ready = cert.then(async (identity) => {
      const { ConnectionCache } = await import('./connection-cache.js');
      this.identity = identity;
      this.cache = new ConnectionCache({
        identity,
        maxConnections: d.maxConnections,
        evictionGraceMs: d.evictionGraceMs,
        idleCloseMs: d.idleCloseMs,
        maxIdleTimeoutMs: d.maxIdleTimeoutMs,
        keepAliveMs: d.keepAliveMs,
        connectTimeoutMs: d.connectTimeoutMs,
        retryMinMs: d.retryMinMs,
        retryMaxMs: d.retryMaxMs,
        maxQueuedPerConnection: d.maxQueuedPerConnection, // rebroadcasts
        // First sends are bounded by the ring / slab slots they hold, never by a count here: an accepted transaction
        // is not dropped:queue_full (admission by delay keeps their wait short instead: docs/relay-api.md).
        maxQueuedFirstSends: Infinity,
        staleAfterMs,
        maxTransactionBytes: config.transactions.maxTransactionBytes,
        congestionControl: d.congestionControl,
        log,
        onSendLatency,
      });
      const links = options.links ?? [];
      if (links.length > 0 && !this.closed) {
        const { QuicLinkEnd } = await import('./quic-link.js');
        this.linkEnds = links.map((l, i) => new QuicLinkEnd(l, { thread: i + 1, staleAfterMs, log }));
        this.connections = new ShardedConnections(this.cache, this.linkEnds);
      } else {
        this.connections = this.cache;
      }
      const gauges = options.gauges;
      if (gauges !== undefined && !this.closed) {
        const cache = this.cache;
        this.gaugeTimer = setInterval(() => cache.writeGauges(gauges), GAUGE_WRITE_MS);
        this.gaugeTimer.unref();
      }
      if (this.closed) void this.cache.close();
      else if (path !== undefined && config.identity.reloadCheckMs > 0) {
        this.watchedPath = path;
        watchFile(path, { interval: config.identity.reloadCheckMs, persistent: false }, this.onKeypairFile);
      }
      return this.cache;
    });
    this.ready.catch((err: unknown) => log.error({ err: err instanceof Error ? err.message : String(err) }, 'egress: relay identity unusable; QUIC routes fail'));
  }

  /** Post the connection cache's measurements to the telemetry thread every MEASUREMENT_REPORT_MS (cold). */
  reportMeasurementsTo(port: MessagePort): void {
    this.reportTimer = setInterval(() => {
      if (this.cache !== null) postRouteMeasurements(port, fromConnectionReports(this.cache.report()));
    }, MEASUREMENT_REPORT_MS);
    this.reportTimer.unref();
  }

  /** Re-reads the keypair file; switches identity when it holds another keypair. Resolves with the identity in use. */
  async reloadIdentity(): Promise<string | null> {
    const path = this.watchedPath;
    const cache = this.cache;
    if (path === null || cache === null || this.closed || this.reloading) return this.identity?.identity ?? null;
    this.reloading = true;
    try {
      const secret = readKeypairFile(path);
      const next = base58Encode(secret.subarray(32));
      const current = this.identity?.identity ?? null;
      if (next === current) return current;
      const cert = await createIdentityCertificate(secret);
      if (this.closed) return current;
      this.identity = cert;
      const cycled = cache.setIdentity(cert);
      this.log.warn({ event: 'identity_changed', from: current, identity: cert.identity, keypairPath: path, connectionsCycled: cycled }, 'egress: relay identity changed: new connections present it, open ones are being reopened');
      return cert.identity;
    } catch (err) {
      this.log.error({ keypairPath: path, err: err instanceof Error ? err.message : String(err) }, 'egress: identity reload failed; keeping the current identity');
      return this.identity?.identity ?? null;
    } finally {
      this.reloading = false;
    }
  }

  private readonly onKeypairFile = (cur: Stats, prev: Stats): void => {
    if (cur.mtimeMs === prev.mtimeMs && cur.size === prev.size && cur.ino === prev.ino) return;
    if (cur.size === 0) return; // being rewritten (or deleted): wait for the next change
    void this.reloadIdentity();
  };

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.watchedPath !== null) unwatchFile(this.watchedPath, this.onKeypairFile);
    if (this.reportTimer !== null) clearInterval(this.reportTimer);
    if (this.gaugeTimer !== null) clearInterval(this.gaugeTimer);
    await Promise.all([this.cache?.close(), ...this.linkEnds.map((l) => l.close())]);
  }
}
