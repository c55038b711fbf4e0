// One JSON POST over a keep-alive node:http(s) agent, as the rpc and jito routes send them (egress worker): a
// per-request timeout, one retry on a fresh socket when a kept-alive one turns out closed, a bounded answer, and the
// answer judged by the caller. Each route keeps its own error class (its outcome reasons); this only moves bytes.
import http from 'node:http';
import https from 'node:https';

/** Largest answer read; a sendTransaction result is ~100 bytes, errors a few KB. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
const EMPTY = Buffer.alloc(0);

export interface JsonPostTarget {
  readonly url: URL;
  readonly agent: http.Agent;
  readonly request: typeof http.request;
  /** Every header but content-length. */
  readonly headers: http.OutgoingHttpHeaders;
  readonly timeoutMs: number;
  /** Requests under way, so the route's close() can abort them. */
  readonly inFlight: Set<http.ClientRequest>;
}

/** The route's own errors for what can go wrong on the way. */
export interface JsonPostErrors {
  timeout(ms: number): Error;
  tooLarge(status: number): Error;
  /** A socket error (refused, reset, ...); errors the route raised itself pass through unchanged. */
  network(err: NodeJS.ErrnoException): Error;
  /** null when the complete answer is a success. */
  answer(status: number, body: Buffer): Error | null;
}

/**
 * `body` must be ASCII. Resolves with the answer's body when it is a success (the routes ignore it; the bundle
 * service's client reads it); rejects with one of the caller's errors otherwise.
 */
export function postJson(target: JsonPostTarget, body: string, errors: JsonPostErrors, mayRetry = true): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const req = target.request(target.url, {
      method: 'POST',
      agent: target.agent,
      // length, not byteLength: the routes' bodies are JSON of base64 and digits, ASCII only.
      headers: { ...target.headers, 'content-length': body.length },
    });
    target.inFlight.add(req);
    let settled = false;
    const timer = setTimeout(() => req.destroy(errors.timeout(target.timeoutMs)), target.timeoutMs);
    const finish = (err: Error | null, answer: Buffer = EMPTY): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      target.inFlight.delete(req);
      if (err === null) resolve(answer);
      else reject(err);
    };
    req.on('error', (err: NodeJS.ErrnoException) => {
      // A kept-alive socket the server closed while idle: retry once on a fresh one (Node http docs' advice).
      if (mayRetry && req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE') && !settled) {
        settled = true;
        clearTimeout(timer);
        target.inFlight.delete(req);
        postJson(target, body, errors, false).then(resolve, reject);
        return;
      }
      finish(errors.network(err));
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_RESPONSE_BYTES) {
          req.destroy(errors.tooLarge(res.statusCode ?? 0));
          return;
        }
        chunks.push(c);
      });
      res.on('error', (err) => finish(err));
      res.on('end', () => {
        const answer = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        finish(errors.answer(res.statusCode ?? 0, answer), answer);
      });
    });
    req.end(body);
  });
}

/** A target with its own keep-alive agent of `connections` sockets (LIFO: the warmest socket first). */
export function keepAliveTarget(
  url: URL,
  connections: number,
  headers: http.OutgoingHttpHeaders,
  timeoutMs: number,
  inFlight: Set<http.ClientRequest>,
): JsonPostTarget {
  const secure = url.protocol === 'https:';
  const agentOptions: http.AgentOptions = { keepAlive: true, maxSockets: connections, maxFreeSockets: connections, scheduling: 'lifo' };
  return {
    url,
    agent: secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions),
    request: secure ? https.request : http.request,
    headers,
    timeoutMs,
    inFlight,
  };
}
