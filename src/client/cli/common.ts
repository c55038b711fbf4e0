// What `slotrelay send | leaders | fees` share (cold, the CLI's main thread): the flags that build a RelayClient
// (--relay, --rpc, --key or SLOTRELAY_KEY, --timeout) and how a typed error is printed. The commands use the client
// library exactly as a user does; only this CLI layer knows about exit codes (1 refused/failed, 2 bad usage).
import { ConfigError } from '../../config/load.js';
import { RelayClient, type RelayClientOptions } from '../relay-client.js';
import { SlotrelayError } from '../errors.js';

/** The default listeners of `slotrelay start` (config rpcHost / relayHost). */
export const DEFAULT_RELAY_URL = 'http://127.0.0.1:8080';
export const DEFAULT_RPC_URL = 'http://127.0.0.1:8899';

/** parseArgs options every client command takes. */
export const CLIENT_FLAGS = {
  relay: { type: 'string' },
  rpc: { type: 'string' },
  key: { type: 'string' },
  timeout: { type: 'string' },
} as const;

export interface ClientFlagValues {
  relay?: string;
  rpc?: string;
  key?: string;
  timeout?: string;
}

export function positiveIntFlag(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) === 0 || !Number.isSafeInteger(Number(v))) throw new ConfigError(`--${name} must be a positive integer`);
  return Number(v);
}

export function nonNegativeIntFlag(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw new ConfigError(`--${name} must be a non-negative integer`);
  return Number(v);
}

/** A RelayClient from the flags; bad URLs or a missing key are usage errors (exit 2). */
export function clientFromFlags(v: ClientFlagValues, env: NodeJS.ProcessEnv, extra: Partial<RelayClientOptions> = {}): RelayClient {
  const apiKey = v.key ?? env.SLOTRELAY_KEY;
  if (apiKey === undefined || apiKey === '') throw new ConfigError('no API key: pass --key KEY or set SLOTRELAY_KEY');
  try {
    return new RelayClient({
      url: v.relay ?? DEFAULT_RELAY_URL,
      rpcUrl: v.rpc ?? DEFAULT_RPC_URL,
      apiKey,
      timeoutMs: positiveIntFlag('timeout', v.timeout),
      ...extra,
    });
  } catch (err) {
    if (err instanceof TypeError) throw new ConfigError(err.message);
    throw err;
  }
}

/** A typed error as the JSON the relay answered (plus what the client knows); anything else is rethrown. */
export function errorJson(err: unknown): Record<string, unknown> {
  if (!(err instanceof SlotrelayError)) throw err;
  const out: Record<string, unknown> = { accepted: false };
  if (err.status !== undefined) out.status = err.status;
  const error: Record<string, unknown> = { reason: err.reason, message: err.message };
  if (err.code !== undefined) error.code = err.code;
  if (err.data !== undefined) error.data = err.data;
  out.error = error;
  if (err.retryAfterMs !== undefined) out.retryAfterMs = err.retryAfterMs;
  if (err.requestId !== undefined) out.requestId = err.requestId;
  if (err.quicStreamCode !== undefined) out.quicStreamCode = err.quicStreamCode;
  if (err.quicConnectionCode !== undefined) out.quicConnectionCode = err.quicConnectionCode;
  return out;
}

/** One line on stderr for a failed read command: reason, message, and when to retry. Returns exit code 1. */
export function printFailure(err: unknown): number {
  if (!(err instanceof SlotrelayError)) throw err;
  const retry = err.retryAfterMs === undefined ? '' : ` (retry after ${err.retryAfterMs} ms)`;
  const status = err.status === undefined ? '' : ` HTTP ${err.status}`;
  process.stderr.write(`slotrelay: ${err.reason}${status}: ${err.message}${retry}\n`);
  return 1;
}
