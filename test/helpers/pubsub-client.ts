// A plain PubSub WebSocket client for tests (the `ws` package, as any Node program would use): JSON-RPC calls by id,
// every message kept (parsed and as text), the close code and reason, and refused upgrades read as HTTP answers.
import WebSocket from 'ws';

export interface RefusedUpgrade {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

export class PubsubClient {
  /** Every message received, parsed; `raw` holds the same as text. */
  readonly inbox: any[] = [];
  readonly raw: string[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private nextId = 1;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const text = data.toString();
      this.raw.push(text);
      this.inbox.push(JSON.parse(text));
    });
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  /** Opens `url`; rejects with a RefusedUpgrade when the server answers the upgrade with an HTTP status. */
  static open(url: string, headers: Record<string, string> = {}): Promise<PubsubClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      const client = new PubsubClient(ws);
      ws.once('open', () => resolve(client));
      ws.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const refused: RefusedUpgrade = { status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString() };
          reject(refused);
        });
      });
      ws.once('error', (err) => reject(err));
    });
  }

  /** The HTTP answer to an upgrade the server refuses (fails the test if it upgrades). */
  static async refused(url: string, headers: Record<string, string> = {}): Promise<RefusedUpgrade> {
    try {
      const c = await PubsubClient.open(url, headers);
      c.close();
    } catch (err) {
      if ((err as RefusedUpgrade).status !== undefined) return err as RefusedUpgrade;
      throw err;
    }
    throw new Error(`the upgrade to ${url} was accepted`);
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The first message (already received or coming) that `pred` accepts, removed from the inbox. */
  next(pred: (m: any) => boolean, ms = 10_000): Promise<any> {
    return new Promise((resolve, reject) => {
      const end = Date.now() + ms;
      const poll = (): void => {
        const i = this.inbox.findIndex(pred);
        if (i >= 0) return resolve(this.inbox.splice(i, 1)[0]);
        if (Date.now() > end) return reject(new Error(`no matching message in ${ms} ms; inbox: ${JSON.stringify(this.inbox).slice(0, 500)}`));
        setTimeout(poll, 5);
      };
      poll();
    });
  }

  /** A JSON-RPC call; resolves with the whole answer (result or error). */
  call(method: string, params?: unknown): Promise<any> {
    const id = this.nextId++;
    this.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return this.next((m) => m.id === id);
  }

  /** A subscribe that must succeed: its subscription id. */
  async subscribe(method: string, params?: unknown): Promise<number> {
    const answer = await this.call(method, params);
    if (typeof answer.result !== 'number') throw new Error(`${method} failed: ${JSON.stringify(answer)}`);
    return answer.result;
  }

  close(): void {
    this.ws.close();
  }
}
