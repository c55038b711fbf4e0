// The `keys` section (cold): one API key and its plan (routes, limits, preflight, PubSub, QUIC identities). Also
// read on its own for keysFile and the engine's keys (src/cluster/key-plan.ts).
import { z } from 'zod';
import { ROUTE_BY_ID } from '../shm/layout.js';
import { quicIdentitiesSchema } from './quic-ingress-schema.js';
import { tokenBucket, uuid } from './schema-parts.js';

/** The route names, from the one list that also numbers them (the ring's route-mask bits, src/shm/layout.ts). */
export const ROUTE_NAMES = ROUTE_BY_ID;
export type RouteName = (typeof ROUTE_NAMES)[number];

export const keySchema = z
  .object({
    /** The API key itself, a UUID. Never logged; its `name` is what logs and metrics show. */
    key: uuid,
    /** Human name for logs. */
    name: z.string().min(1).max(64),
    /** Route policy: what this key may use. A request's route set is intersected with it. */
    allowedRoutes: z.array(z.enum(ROUTE_NAMES)).min(1).default(['rpc', 'direct', 'jito', 'static']),
    /** Routes used when a request names none (JSON-RPC sendTransaction, /v1/transactions). */
    defaultRoutes: z.array(z.enum(ROUTE_NAMES)).min(1).optional(),
    /** Submission rate limit (token bucket on the front thread). */
    rateLimit: tokenBucket(50, 100),
    /** Whether bundle submission (jito sendBundle) is enabled for this key. */
    bundles: z.boolean().default(false),
    /** Simulation rate limit: preflight simulations and simulateTransaction calls. */
    simulateLimit: tokenBucket(10, 20),
    /**
     * Rate limit of the other JSON-RPC calls (getLeaderSlots, unknown methods, invalid elements), apart from
     * submissions so that a client polling getLeaderSlots every slot does not spend its send budget.
     */
    readLimit: tokenBucket(100, 200),
    /**
     * What sendTransaction with skipPreflight: false does for this key:
     * simulate — run the preflight through the upstream RPC (Agave behaviour; the default);
     * skip     — send without simulating, as if skipPreflight were true;
     * reject   — answer -32602 asking the client to set skipPreflight: true.
     */
    preflight: z.enum(['simulate', 'skip', 'reject']).default('simulate'),
    /** Verify every Ed25519 signature before accepting (~100 us per signature; off by default). */
    verifySignatures: z.boolean().default(false),
    /** Open PubSub subscriptions this key may hold at once, over all its WebSocket connections (docs/pubsub.md). */
    subscriptionLimit: z.number().int().min(0).max(100_000).default(100),
    /** Solana identities (base58) whose certificate authenticates as this key on the QUIC ingress (docs/quic-ingress.md). */
    quicIdentities: quicIdentitiesSchema,
  })
  .strict();

export type KeyConfig = z.infer<typeof keySchema>;
