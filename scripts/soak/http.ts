// Minimal HTTP client for the soak driver (driver process; warm: one call per submission, a few hundred per second):
// keep-alive node:http agents, a whole-request timeout, bodies capped, and transport failures returned as values.
import http from 'node:http';

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

export interface TransportFailure {
  /** errno code (ECONNREFUSED, ECONNRESET, ...), `timeout` or `too_large`. */
  readonly transport: string;
}

/** Largest answer body read (a /metrics text is ~30 KB; anything near this is not ours). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export function keepAliveAgent(maxSockets: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets, keepAliveMsecs: 1000 });
}

export function request(
  agent: http.Agent,
  base: string,
  method: 'GET' | 'POST',
  path: string,
  headers: http.OutgoingHttpHeaders,
  body: string | Buffer | null,
  timeoutMs: number,
): Promise<HttpAnswer | TransportFailure> {
  const url = new URL(path, base);
  return new Promise((resolve) => {
    let settled = false;
    const done = (v: HttpAnswer | TransportFailure): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(v);
    };
    const req = http.request(
      { agent, host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers: body === null ? headers : { ...headers, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY_BYTES) {
            req.destroy();
            done({ transport: 'too_large' });
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err: NodeJS.ErrnoException) => done({ transport: err.code ?? 'response_error' }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ transport: 'timeout' });
    }, timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => done({ transport: err.code ?? 'request_error' }));
    req.end(body ?? undefined);
  });
}

export function isTransportFailure(a: HttpAnswer | TransportFailure): a is TransportFailure {
  return (a as TransportFailure).transport !== undefined;
}
