// Passthrough reads on the JSON-RPC host (front thread; each call an async upstream request, never awaited on the
// send path): every method of config.jsonRpc.passthroughMethods is forwarded to the upstream RPC (upstream.rpcUrl,
// the embedded localnet by default) and its answer handed back with the caller's id (docs/passthrough.md).
// - The request upstream carries the client's method and params re-serialised (JSON.stringify of what the envelope
//   parsed; absent params stay absent) and our own numeric id, one upstream request per element (a batch's
//   passthrough elements go concurrently over the pool, never as one upstream batch: docs/passthrough.md).
// - The result text goes back byte for byte when the upstream's body has Agave's shape (result-text.ts).
// - The upstream's JSON-RPC error goes back as it was (UpstreamRpcError: code, message, data; null data omitted);
//   no answer in upstream.requestTimeoutMs -> -32005 upstream_timeout; no connection, a non-200 status or a body that
//   is no JSON-RPC answer -> -32005 upstream_unavailable. Never the upstream's URL or a transport message.
// The endpoint has already charged the element to the key's readLimit (src/front/json-rpc-endpoint.ts). Methods the
// relay serves itself (RELAY_SERVED_METHODS in src/config/schema.ts) are refused in the list at load.
import { Errors, RelayError } from '../../errors/registry.js';
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import type { JsonRpcCall } from '../../jsonrpc/envelope.js';
import { upstreamFailure } from '../upstream-client.js';
import { RawUpstream } from './raw-upstream.js';
import { resultText } from './result-text.js';

/** Forwards calls to one upstream; one object for every passthrough method (ids are unique across them). */
export class Passthrough {
  /** Our id of the next upstream request (the caller's id never goes upstream: it may be any string). */
  private nextId = 1;

  constructor(private readonly upstream: RawUpstream) {}

  /** Forward one call; resolves with the result text or rejects with the client's error (UpstreamRpcError / RelayError). */
  forward(method: string, params: unknown): Promise<string> {
    const id = this.nextId;
    // Small integers (Agave's ids are u64): wrap long before 2^53.
    this.nextId = id >= 0x7fffffff ? 1 : id + 1;
    // The method name is a key of the method table, i.e. from the config (letters and digits only): no escaping.
    const head = '{"jsonrpc":"2.0","id":' + id + ',"method":"' + method + '"';
    const body = params === undefined ? head + '}' : head + ',"params":' + JSON.stringify(params) + '}';
    return this.upstream.post(body).then((text) => resultTextOrFailure(text, id), rethrowAsFailure);
  }

  close(): Promise<void> {
    return this.upstream.close();
  }
}

function rethrowAsFailure(err: unknown): never {
  throw upstreamFailure(err);
}

function resultTextOrFailure(text: string, id: number): string {
  try {
    return resultText(text, id);
  } catch (err) {
    throw upstreamFailure(err);
  }
}

const NO_UPSTREAM: MethodHandler<unknown> = () => {
  throw new RelayError(Errors.UPSTREAM_UNAVAILABLE);
};

/**
 * The handlers of `methods`, all forwarding through one Passthrough to `rpcUrl` (a new pool of connections).
 * Without an upstream URL every listed method answers -32005 upstream_unavailable.
 */
export function passthroughMethods<C>(
  methods: readonly string[],
  rpcUrl: string | undefined,
  timeoutMs: number,
): { readonly table: ReadonlyMap<string, MethodHandler<C>>; readonly passthrough: Passthrough | null } {
  const passthrough = rpcUrl === undefined ? null : new Passthrough(new RawUpstream({ url: rpcUrl, timeoutMs }));
  const table = new Map<string, MethodHandler<C>>();
  for (const m of methods) {
    table.set(
      m,
      passthrough === null ? (NO_UPSTREAM as MethodHandler<C>) : (params: unknown, _ctx: C, call: JsonRpcCall) => passthrough.forward(call.method, params),
    );
  }
  return { table, passthrough };
}
