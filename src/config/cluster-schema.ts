// The `cluster` section (cold): several relays as one service on a Redis engine (docs/multi-region.md).
import { z } from 'zod';
import { label } from './schema-parts.js';

export const clusterSchema = z
  .object({
    /**
     * The engine: redis://[:password@]host:port[/db] (rediss:// for TLS). Absent: this relay alone (today's behaviour,
     * no engine). Logs show scheme, host and port only.
     */
    url: z
      .string()
      .url()
      .refine((u) => /^rediss?:\/\//.test(u), 'must be a redis:// or rediss:// URL')
      .optional(),
    /** Prefix of every engine key: one engine can carry several services (all relays of one service share it). */
    namespace: label.default('slotrelay'),
    /** An engine command not answered by then counts as failed (the engine is then treated as down). */
    commandTimeoutMs: z.number().int().min(50).max(60_000).default(1_000),
    /** Shared route telemetry: this region's measurements out, the other regions' in (telemetry thread). */
    telemetry: z
      .object({
        enabled: z.boolean().default(true),
        /** How often this relay writes its region's figures and reads the others'. */
        publishIntervalMs: z.number().int().min(100).max(60_000).default(1_000),
        /** A region's figures not rewritten for this long disappear (engine TTL): rows show its estimate again. */
        staleAfterMs: z.number().int().min(200).max(600_000).default(5_000),
      })
      .strict()
      .refine((t) => t.staleAfterMs >= 2 * t.publishIntervalMs, { message: 'staleAfterMs must be at least 2 x publishIntervalMs', path: ['staleAfterMs'] })
      .default({}),
    /** Per-key budgets shared by all relays: leased from the engine in slices, spent locally (docs/multi-region.md). */
    limits: z
      .object({
        enabled: z.boolean().default(true),
        /** One engine round trip per this interval renews the leases of every key in use (one pipeline). */
        leaseIntervalMs: z.number().int().min(20).max(5_000).default(200),
        /** Leased tokens unused for this long go back to the shared budget. */
        idleReturnMs: z.number().int().min(100).max(600_000).default(2_000),
      })
      .strict()
      .default({}),
    /**
     * Key revocations and keys/plans in the engine (`slotrelay keys revoke|add|set|remove`): applied on their change
     * notice, and read every pollMs in any case (the bound when a notice is missed).
     */
    keys: z
      .object({
        pollMs: z.number().int().min(100).max(600_000).default(1_000),
      })
      .strict()
      .default({}),
  })
  .strict()
  .default({});

export type ClusterConfig = z.infer<typeof clusterSchema>;
