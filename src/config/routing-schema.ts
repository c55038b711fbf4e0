// `routing:` (cold: parsed once at start): how the relay adapts its routes to what is landing now. The adaptive
// policy is docs/adaptive-routing.md; its code is src/receipts/adaptive-routing.ts (the scoreboard and the decisions)
// and src/egress/quic/scheduler.ts (the widened fanout).
import { z } from 'zod';

/** Routes the adaptive policy may add for a leader that parks the direct route (never beyond a key's allowedRoutes). */
export const ADAPTIVE_PARTNERS = Object.freeze(['rpc', 'jito'] as const);

export const routingSchema = z
  .object({
    adaptive: z
      .object({
        /** Off by default: routes are exactly what the request and its key say. */
        enabled: z.boolean().default(false),
        /** Evidence halves every this long: how far back "what is landing now" reaches. */
        halfLifeMs: z.number().int().min(500).max(600_000).default(10_000),
        /** A leader is judged only once it has at least this much (decayed) evidence for the direct route. */
        minEvidence: z.number().min(1).max(100_000).default(8),
        /**
         * The direct route's good share at a leader (landed there / all evidence) below which that leader parks the
         * relay: its slots get the wider fanout and the partner routes.
         */
        parkedBelow: z.number().min(0).max(1).default(0.5),
        /**
         * When a transaction counts as landed or not for the scoreboard (ms after acceptance): landed by then at the
         * leader aimed at is good evidence, not landed yet is bad. A few slots: later is surer but slower to move.
         */
        judgeAfterMs: z.number().int().min(400).max(60_000).default(3_000),
        /** Leaders beyond the fanout policy's that a parking leader's slots also go to (0: never widen). */
        maxExtraCopies: z.number().int().min(0).max(8).default(2),
        /**
         * Widen a parking leader's slots even when a partner route is added there. Off: the partner carries the
         * transaction and the extra direct copies are not sent (they cost every extra leader a read; a relay that
         * runs no partner, or whose partners fail at that leader, still widens). Per leader, not per key: the
         * widened fanout is per slot, so a key that allows no partner gets no widening at such a leader either.
         */
        widenWithPartners: z.boolean().default(false),
        /**
         * Slots before and after a parking leader's window that are treated as its own (0..4): a transaction
         * accepted just before the window reaches the leader in it, and one accepted just after may still be aimed
         * at it by a slot estimate a little behind.
         */
        marginSlots: z.number().int().min(0).max(4).default(1),
        /** Routes added for a parking leader's slots, each only when the request's key allows it and the relay runs it. */
        partners: z.array(z.enum(ADAPTIVE_PARTNERS)).max(ADAPTIVE_PARTNERS.length).default(['rpc', 'jito']),
        /**
         * Partner routes a transaction goes by at most, the ones its request named included: the best at that
         * leader first (its share there; unknown counts as landing; ties in `partners` order). Each is a paid copy
         * that its partner resends on its own schedule, so a second one mostly buys duplicates.
         */
        maxPartners: z.number().int().min(1).max(ADAPTIVE_PARTNERS.length).default(1),
        /** Leaders the scoreboard remembers at most (the least recently seen is forgotten first). */
        maxLeaders: z.number().int().min(16).max(65_536).default(1_024),
      })
      .strict()
      .default({}),
  })
  .strict()
  .default({});

export type RoutingConfig = z.infer<typeof routingSchema>;
