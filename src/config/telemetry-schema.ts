// The `telemetry` section (cold): regions, validator locations, txPath annotations, the probe and the snapshot.
import { z } from 'zod';
import { label, latitude, longitude, positiveInt } from './schema-parts.js';

const telemetryRegion = z
  .object({
    /** Region name as rows show it (pingToLeaders.region, txPaths.pathRegion, routeScores.active_region). */
    name: label,
    latitude,
    longitude,
    /** routeScores.market_latency_ms: one-way ms from this region to the market the client reacts to. */
    marketLatencyMs: z.number().min(0).default(0),
    /** Listed in routeScores (an inactive region still serves as a path's entry region). */
    active: z.boolean().default(true),
  })
  .strict();

export const locationEntrySchema = z
  .object({
    /** Match by validator identity (base58) or by the IP of its tpuQuic address; identity wins. */
    identity: z.string().min(32).max(44).optional(),
    ip: z.string().min(2).optional(),
    dataCenterKey: label,
    region: label,
    latitude,
    longitude,
  })
  .strict()
  .refine((e) => e.identity !== undefined || e.ip !== undefined, 'needs identity or ip');

/**
 * An annotation of a txPath the relay offers (src/config/tx-paths.ts): the paths themselves come from
 * routes.static.peers and routes.jito; an entry matching none of them is refused at load.
 */
const telemetryPath = z
  .object({
    /**
     * txPaths.provider. static: "static:<ip:port>" names that peer; with `peer` set, any name (e.g. "static:ams-1").
     * partner: "jito" (routes.jito). "direct" is reserved for the relay's own TPU path.
     */
    provider: label.refine((p) => p !== 'direct', '"direct" is reserved'),
    kind: z.enum(['static', 'partner']),
    /** static: the routes.static.peers entry this annotates (default: taken from provider "static:<ip:port>"). */
    peer: z.string().regex(/^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):\d{1,5}$/, 'must be "ip:port"').optional(),
    /** Region where the path enters the cluster (one of telemetry.regions). */
    region: label,
    /** One-way ms from this relay to the path's entry point while the hop is not measured (default: estimated). */
    hopLatencyMs: z.number().min(0).optional(),
    doublezeroAvailable: z.boolean().default(false),
  })
  .strict();

export const telemetrySchema = z
  .object({
    /** Run the telemetry thread. Off: getLeaderSlots always answers "snapshot missing". */
    enabled: z.boolean().default(true),
    /** Cluster JSON-RPC for slot, schedule, nodes and stake. Default: upstream.rpcUrl (or the embedded localnet). */
    rpcUrl: z.string().url().optional(),
    /** PubSub for slotSubscribe. Default: rpcUrl with ws(s):// and port + 1 (Agave's convention). */
    wsUrl: z.string().url().optional(),
    /**
     * getSlot polling interval while the subscription is down (the fallback). 200 ms: at least one poll per slot at
     * mainnet's slot times (250 ms now, 200 ms planned), so the snapshot still moves every slot; the slot time itself
     * is measured from the polls either way (src/telemetry/slot-duration.ts).
     */
    slotPollIntervalMs: positiveInt.default(200),
    /** Refresh of getClusterNodes (tpuQuic) and getVoteAccounts (stake). */
    clusterRefreshMs: positiveInt.default(30_000),
    /** Upstream request timeout. */
    requestTimeoutMs: positiveInt.default(5_000),
    /**
     * getLeaderSlots fails closed (stale) when the snapshot is older than this; the direct route and /health use the
     * same bound. A time, not a slot count: it bounds how long the relay serves leader data without hearing from the
     * cluster (8 slots at 250 ms, 10 at 200 ms; /health?detail shows behindSlots at the measured slot time).
     */
    maxSnapshotAgeMs: positiveInt.default(2_000),
    /** Rows kept before the snapshot's slot, so a client whose slot lags a little is still covered. */
    lookbackSlots: z.number().int().min(0).max(1_000).default(8),
    /** Rows after the snapshot's slot (the horizon). 512 slots: ~2.1 minutes at 250 ms slots, ~1.7 at 200 ms. */
    horizonSlots: z.number().int().min(1).max(20_000).default(512),
    /** getLeaderSlots `limit` when the client gives none; the cap is 100 (v1). */
    defaultLimit: z.number().int().min(1).max(100).default(20),
    /** This relay's own region: its ping is measured, the others are estimated. */
    region: label.default('local'),
    regions: z.array(telemetryRegion).min(1).default([{ name: 'local', latitude: 0, longitude: 0 }]),
    /**
     * Validator-location dataset: inline entries and/or a YAML/JSON file (a list of entries; a relative path is
     * relative to the config file, like keysFile). loadConfig reads and checks the file and merges it into entries.
     */
    locations: z
      .object({ file: z.string().optional(), entries: z.array(locationEntrySchema).default([]) })
      .strict()
      .default({}),
    /** The relay's own TPU path ("direct"). */
    direct: z.object({ doublezeroAvailable: z.boolean().default(false) }).strict().default({}),
    /** Annotations of the static / partner txPaths (region, configured hop, DoubleZero); the paths come from routes. */
    paths: z.array(telemetryPath).default([]),
    /** Latency estimates: RTT = baseRttMs + 2 x distance_km x routeFactor / kmPerMs; unknownRttMs when there is no location. */
    estimate: z
      .object({
        kmPerMs: z.number().positive().default(200),
        routeFactor: z.number().min(1).default(1.5),
        baseRttMs: z.number().min(0).default(1),
        unknownRttMs: z.number().min(0).default(200),
      })
      .strict()
      .default({}),
    /**
     * QUIC handshake probe of upcoming leaders that the egress has no live connection to (their ping is measured by
     * the egress reports). Agave lets an unstaked peer open 8 connections per minute per IP: the probe opens at most
     * one per validator per perPeerIntervalMs (default 2 a minute, leaving 6 to the egress) and none to a validator
     * the egress connected to within the last minute.
     */
    probe: z
      .object({
        enabled: z.boolean().default(true),
        intervalMs: positiveInt.default(5_000),
        timeoutMs: positiveInt.default(1_000),
        leaders: z.number().int().min(1).max(64).default(8),
        /** At least this long between two probe handshakes to one validator (7500 = 8 a minute, Agave's whole budget). */
        perPeerIntervalMs: z.number().int().min(7_500).default(30_000),
      })
      .strict()
      .default({}),
    /** Route measurements older than this are ignored. */
    measurementTtlMs: positiveInt.default(60_000),
    /** Bytes of one snapshot buffer (two are allocated). */
    snapshotCapacityBytes: z.number().int().min(65_536).max(256 << 20).multipleOf(8).default(4 << 20),
    /** Testing only: publish snapshots with this schema version (anything but 1 makes getLeaderSlots fail closed). */
    publishSchemaVersion: z.number().int().min(0).default(1),
    /** First restart delay after the thread dies; doubles per consecutive crash, up to 5 s. */
    restartBackoffMs: positiveInt.default(200),
  })
  .strict()
  .superRefine((t, ctx) => {
    const names = new Set(t.regions.map((r) => r.name));
    if (names.size !== t.regions.length) ctx.addIssue({ code: 'custom', path: ['regions'], message: 'region names must be unique' });
    if (!names.has(t.region)) ctx.addIssue({ code: 'custom', path: ['region'], message: `"${t.region}" is not one of telemetry.regions` });
    t.paths.forEach((p, i) => {
      if (!names.has(p.region)) ctx.addIssue({ code: 'custom', path: ['paths', i, 'region'], message: `"${p.region}" is not one of telemetry.regions` });
    });
  })
  .default({});

export type TelemetryConfig = z.infer<typeof telemetrySchema>;
