// HTTP for the landing bench (CLI process, cold per call but many calls): JSON-RPC to the cluster and the relay's
// submit and receipt paths, over undici keep-alive pools (one per origin), with a per-request timeout.
import { Agent, request } from 'undici';

const agent = new Agent({ connections: 32, keepAliveTimeout: 30_000, pipelining: 1 });
const TIMEOUT_MS = 10_000;

export class RpcCallError extends Error {
  constructor(
    readonly method: string,
    message: string,
    readonly code?: number,
  ) {
    super(`${method}: ${message}`);
  }
}

let nextId = 1;

export async function rpcCall<T>(url: string, method: string, params: readonly unknown[] = []): Promise<T> {
  const res = await request(url, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });
  const text = await res.body.text();
  let msg: { result?: T; error?: { code: number; message: string } };
  try {
    msg = JSON.parse(text) as typeof msg;
  } catch {
    throw new RpcCallError(method, `HTTP ${res.statusCode}, not JSON: ${text.slice(0, 120)}`);
  }
  if (msg.error) throw new RpcCallError(method, msg.error.message, msg.error.code);
  return msg.result as T;
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

export async function httpJson(method: 'GET' | 'POST', url: string, key: string, body?: unknown): Promise<HttpAnswer> {
  const res = await request(url, {
    method,
    dispatcher: agent,
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: body === undefined ? undefined : JSON.stringify(body),
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });
  return { status: res.statusCode, body: await res.body.text() };
}

export async function closeHttp(): Promise<void> {
  await agent.close();
}
