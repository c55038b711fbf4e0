// The pieces the config sections share (cold: built once at import): UUIDs, ports, listeners, token-bucket limits,
// printable labels and coordinates. The sections live in ./schema.ts and its section files.
import { z } from 'zod';

export const uuid = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID');

export const port = z.number().int().min(0).max(65535);

export const positiveInt = z.number().int().positive();

export const listener = (defaultPort: number) =>
  z
    .object({
      /** Serve this host at all. */
      enabled: z.boolean().default(true),
      /** Interface to bind. 127.0.0.1 keeps it private; 0.0.0.0 for colocated clients. */
      host: z.string().min(1).default('127.0.0.1'),
      /** TCP port; 0 picks a free one (the chosen port is printed at start). */
      port: port.default(defaultPort),
    })
    .strict()
    .default({});

/** The burst of a limit that names its rate only: the rate (at least 1), never the default's burst (issue 30, item 5). */
export const burstForRate = (perSecond: number): number => Math.max(1, Math.ceil(perSecond));

export const tokenBucket = (perSecond: number, burst: number) =>
  z
    .preprocess(
      // A limit naming its rate only gets the rate as its burst; one naming neither gets both defaults.
      (v) => (typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as { perSecond?: unknown }).perSecond === 'number' && (v as { burst?: unknown }).burst === undefined && (v as { perSecond: number }).perSecond > 0 ? { ...v, burst: burstForRate((v as { perSecond: number }).perSecond) } : v),
      z
        .object({
          /** Sustained rate, requests per second (each batch element counts). */
          perSecond: z.number().positive().default(perSecond),
          /** Bucket size: how many may arrive at once after idling. Default: the rate when perSecond is given, else `burst`. */
          burst: positiveInt.default(burst),
        })
        .strict(),
    )
    .default({});

// ASCII only: region and provider names end up in precomputed row text, which is ASCII by construction.
export const label = z.string().min(1).max(64).regex(/^[\x20-\x7e]+$/, 'must be printable ASCII');
export const latitude = z.number().min(-90).max(90);
export const longitude = z.number().min(-180).max(180);
