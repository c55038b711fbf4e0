// The submit transport seam (caller's thread, cold: chosen once at construction). RelayClient talks to the relay host
// only through a SubmitTransport, so the QUIC transport (issue #12: one warm connection, a stream per submit) slots
// in beside HTTP without touching submit's callers. Until the relay has a QUIC ingress, asking for 'quic' fails at
// construction with a TransportUnavailableError: no stub that pretends.
import { TransportUnavailableError } from './errors.js';
import { HttpTransport, type HttpTransportOptions } from './http-transport.js';
import type { RouteName, SubmitResult, TransportKind } from './types.js';
import type { WireTransaction } from './wire-transaction.js';

/** One submit as a transport sees it: the transaction in both encodings (made on demand) and the normalized options. */
export interface SubmitRequest {
  readonly tx: WireTransaction;
  readonly routes: readonly RouteName[] | 'default';
  readonly maxRetries: number | undefined;
  readonly requestId: string | undefined;
  readonly signal: AbortSignal | undefined;
}

export interface SubmitTransport {
  readonly kind: TransportKind;
  /** Resolves with the accepted answer; rejects with a RelaySubmitError (refused, or no usable answer). */
  submit(req: SubmitRequest): Promise<SubmitResult>;
  /** Releases what the transport holds (QUIC: its connection). Submits after close() fail. */
  close(): Promise<void>;
}

export const QUIC_UNAVAILABLE_MESSAGE = "QUIC transport needs the relay's QUIC ingress (issue #12), which this relay version does not have; use transport: 'http'";

export function createTransport(kind: TransportKind, http: HttpTransportOptions): SubmitTransport {
  if (kind === 'http') return new HttpTransport(http);
  if (kind === 'quic') throw new TransportUnavailableError({ reason: 'transport_unavailable', message: QUIC_UNAVAILABLE_MESSAGE });
  throw new TypeError(`transport must be 'http' or 'quic'`);
}
