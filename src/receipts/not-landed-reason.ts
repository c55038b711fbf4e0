// Why a transaction did not land, as far as the relay can know (front thread, cold: once per receipt answered or
// concluded). Pure: from each route's outcome and the cause the egress side wrote beside it
// (src/shm/receipts-layout.ts ROUTE_CAUSES), and whether the transaction's blockhash is known to have expired.
// "Not sent" (no route handed it to anyone: the reason is the most telling route failure) is told apart from "sent,
// not landed" (some route sent it: the blockhash expired, or the relay cannot tell why). docs/receipts.md.
import { ROUTE_CAUSES } from '../shm/receipts-layout.js';

/** The closed set of reason codes (the `reason` label of slotrelay_receipts_not_landed_reason_total). */
export const NOT_LANDED_REASONS = [
  // not sent
  'connection_refused',
  'no_stream_credit',
  'relay_overload',
  'timed_out',
  'route_failed',
  'congestion',
  'connecting',
  'connection_closed',
  'no_leader',
  'no_endpoint',
  'route_unavailable',
  'shutdown',
  'not_sent',
  // sent
  'blockhash_expired',
  'not_landed',
] as const;
export type NotLandedReasonCode = (typeof NOT_LANDED_REASONS)[number];

export interface NotLandedReason {
  readonly code: NotLandedReasonCode;
  /** Whether any route handed the transaction to a leader, peer or endpoint. */
  readonly sent: boolean;
  /** The route whose failure is the reason (not sent), else null. */
  readonly route: string | null;
  /** connection_refused: the leader's QUIC application close code (Agave: 1 dropped, 2 disallowed, 4 too_many). */
  readonly closeCode: number | null;
  /** Its name. */
  readonly closeReason: string | null;
  /** route_failed: `HTTP <status>`, `JSON-RPC <code>`, `timeout` or `network`. */
  readonly detail: string | null;
}

/** One route of a receipt as the reason sees it. */
export interface RouteFacts {
  readonly route: string;
  /** The egress outcome name, or 'pending'. */
  readonly outcome: string;
  /** ROUTE_CAUSES index (0: none / unknown) and its number. */
  readonly cause: number;
  readonly causeCode: number;
  readonly sent: boolean;
}

/** Agave ConnectionCloseCode names. */
const CLOSE_NAMES: Readonly<Record<number, string>> = { 0: 'none', 1: 'dropped', 2: 'disallowed', 3: 'exceed_max_stream_count', 4: 'too_many', 5: 'invalid_stream' };

/**
 * Most telling first: a leader's explicit refusal, then withheld credit, our own overload, silence, ... The "not sent"
 * codes of NOT_LANDED_REASONS are listed in that order, so the rank is their position there.
 */
const RANK: readonly NotLandedReasonCode[] = NOT_LANDED_REASONS.slice(0, NOT_LANDED_REASONS.indexOf('blockhash_expired'));

/** The not-sent reason one route's failure stands for. */
function routeReason(f: RouteFacts): { code: NotLandedReasonCode; closeCode: number | null; detail: string | null } {
  const cause = ROUTE_CAUSES[f.cause] ?? 'none';
  switch (cause) {
    case 'refused':
      return { code: 'connection_refused', closeCode: f.causeCode, detail: null };
    case 'no_stream_credit':
      return { code: 'no_stream_credit', closeCode: null, detail: null };
    case 'congestion':
      return { code: 'congestion', closeCode: null, detail: null };
    case 'connecting':
      return { code: 'connecting', closeCode: null, detail: null };
    case 'timed_out':
      return { code: 'timed_out', closeCode: null, detail: null };
    case 'closed':
      return { code: 'connection_closed', closeCode: null, detail: null };
    case 'relay_queue_full':
      return { code: 'relay_overload', closeCode: null, detail: null };
    case 'route_timeout':
      return { code: 'route_failed', closeCode: null, detail: 'timeout' };
    case 'route_network':
      return { code: 'route_failed', closeCode: null, detail: 'network' };
    case 'route_http':
      return { code: 'route_failed', closeCode: null, detail: `HTTP ${f.causeCode}` };
    case 'route_upstream':
      return { code: 'route_failed', closeCode: null, detail: `JSON-RPC -${f.causeCode}` };
    default:
      break;
  }
  // No cause written (a target another QUIC thread owns, an older writer): the outcome alone.
  switch (f.outcome) {
    case 'dropped:no_leader':
      return { code: 'no_leader', closeCode: null, detail: null };
    case 'dropped:no_endpoint':
      return { code: 'no_endpoint', closeCode: null, detail: null };
    case 'dropped:route_unavailable':
      return { code: 'route_unavailable', closeCode: null, detail: null };
    case 'dropped:shutdown':
      return { code: 'shutdown', closeCode: null, detail: null };
    case 'dropped:queue_full':
      return { code: 'relay_overload', closeCode: null, detail: null };
    case 'dropped:stale':
      return { code: 'no_stream_credit', closeCode: null, detail: null };
    case 'dropped:no_connection':
      return { code: 'connection_closed', closeCode: null, detail: null };
    case 'failed':
      return { code: 'route_failed', closeCode: null, detail: null };
    default:
      return { code: 'not_sent', closeCode: null, detail: null };
  }
}

/**
 * The reason, or null while it cannot be said: some route is still pending and none has sent. `blockhashExpired`:
 * true when the relay knows the blockhash expired, false / null when it does not (not concluded, or not known).
 */
export function notLandedReason(routes: readonly RouteFacts[], blockhashExpired: boolean | null): NotLandedReason | null {
  const sent = routes.some((r) => r.sent);
  if (sent) {
    return { code: blockhashExpired === true ? 'blockhash_expired' : 'not_landed', sent: true, route: null, closeCode: null, closeReason: null, detail: null };
  }
  if (routes.some((r) => r.outcome === 'pending')) return null;
  let best: { code: NotLandedReasonCode; closeCode: number | null; detail: string | null; route: string | null } = {
    code: 'not_sent',
    closeCode: null,
    detail: null,
    route: null,
  };
  for (const f of routes) {
    const r = routeReason(f);
    if (RANK.indexOf(r.code) < RANK.indexOf(best.code)) best = { ...r, route: f.route };
  }
  return {
    code: best.code,
    sent: false,
    route: best.route,
    closeCode: best.closeCode,
    closeReason: best.closeCode === null ? null : (CLOSE_NAMES[best.closeCode] ?? `code_${best.closeCode}`),
    detail: best.detail,
  };
}
