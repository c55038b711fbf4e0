// The submit transport seam (caller's thread, cold: chosen once at construction). RelayClient talks to the relay host
// only through a SubmitTransport: HTTP from this entry, or QUIC (one warm connection, a stream per submit) from the
// separate entry `slotrelay/client/quic`, whose quicTransport() returns a SubmitTransportFactory. The QUIC code needs
// quiche and msgpackr, so this entry cannot construct it by name: `transport: 'quic'` as a string fails at
// construction with a TransportUnavailableError saying what to import.
import { TransportUnavailableError } from './errors.js';
import { HttpTransport, type HttpTransportOptions } from './http-transport.js';
import type { RouteName, SubmitResult, TransportKind, UnacknowledgedSubmitResult } from './types.js';
import type { WireTransaction } from './wire-transaction.js';

/** One submit as a transport sees it: the transaction in both encodings (made on demand) and the normalized options. */
export interface SubmitRequest {
  readonly tx: WireTransaction;
  readonly routes: readonly RouteName[] | 'default';
  readonly maxRetries: number | undefined;
  readonly requestId: string | undefined;
  readonly signal: AbortSignal | undefined;
  /** QUIC uni stream, no answer (SubmitOptions.fireAndForget). */
  readonly fireAndForget: boolean;
}

export interface SubmitTransport {
  readonly kind: TransportKind;
  /** Resolves with the accepted answer; rejects with a RelaySubmitError (refused, or no usable answer). */
  submit(req: SubmitRequest): Promise<SubmitResult | UnacknowledgedSubmitResult>;
  /** Releases what the transport holds (QUIC: its connection). Submits after close() fail. */
  close(): Promise<void>;
}

/** What a transport factory gets from RelayClient: the key, the relay URL (QUIC: its host is the default) and the timeout. */
export interface TransportContext {
  readonly apiKey: string;
  /** The relay host's submit URL, parsed. */
  readonly submitUrl: URL;
  readonly timeoutMs: number;
}

/** A transport made for one RelayClient (e.g. quicTransport({...}) from `slotrelay/client/quic`). */
export type SubmitTransportFactory = (ctx: TransportContext) => SubmitTransport;

export const QUIC_UNAVAILABLE_MESSAGE =
  'the QUIC transport lives in its own entry: pass transport: quicTransport() of the slotrelay/client/quic entry';

export function createTransport(kind: TransportKind | SubmitTransportFactory, http: HttpTransportOptions, ctx: TransportContext): SubmitTransport {
  if (typeof kind === 'function') return kind(ctx);
  if (kind === 'http') return new HttpTransport(http);
  if (kind === 'quic') throw new TransportUnavailableError({ reason: 'transport_unavailable', message: QUIC_UNAVAILABLE_MESSAGE });
  throw new TypeError(`transport must be 'http' or a transport factory such as quicTransport()`);
}
