// slotSubscribe over a minimal WebSocket client (telemetry thread; per slot notification, cold-ish). Node 20 has no
// global WebSocket and the project carries no ws dependency, so this speaks RFC 6455 over node:http's upgrade:
// masked client text frames, unmasked server frames, ping -> pong, close, fragmented messages reassembled.
// It reconnects with backoff; while it is down the caller polls getSlot instead (telemetry-main.ts).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;
/** Frames larger than this close the connection (a slot notification is ~150 bytes). */
const MAX_MESSAGE_BYTES = 1 << 20;

export interface SlotSubscriptionOptions {
  readonly url: string;
  readonly onSlot: (slot: number) => void;
  /** true once subscribed, false when the connection is lost. */
  readonly onState?: (subscribed: boolean) => void;
  readonly connectTimeoutMs?: number;
}

function frame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const len = payload.length;
  const head = len < 126 ? 2 : len < 65536 ? 4 : 10;
  const out = Buffer.allocUnsafe(head + 4 + len);
  out[0] = 0x80 | opcode;
  if (len < 126) out[1] = 0x80 | len;
  else if (len < 65536) {
    out[1] = 0x80 | 126;
    out.writeUInt16BE(len, 2);
  } else {
    out[1] = 0x80 | 127;
    out.writeBigUInt64BE(BigInt(len), 2);
  }
  mask.copy(out, head);
  for (let i = 0; i < len; i++) out[head + 4 + i] = payload[i] ^ mask[i & 3];
  return out;
}

export class SlotSubscription {
  private socket: Duplex | null = null;
  private closed = false;
  private backoffMs = RECONNECT_MIN_MS;
  private timer: NodeJS.Timeout | null = null;
  private buf: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private subscribed = false;

  constructor(private readonly o: SlotSubscriptionOptions) {}

  start(): void {
    this.connect();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.socket?.destroy();
    this.socket = null;
  }

  get isSubscribed(): boolean {
    return this.subscribed;
  }

  private connect(): void {
    if (this.closed) return;
    const u = new URL(this.o.url);
    const secure = u.protocol === 'wss:' || u.protocol === 'https:';
    const req = (secure ? https : http).request({
      host: u.hostname,
      port: u.port || (secure ? 443 : 80),
      path: (u.pathname || '/') + u.search,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        'Sec-WebSocket-Version': '13',
      },
      timeout: this.o.connectTimeoutMs ?? 5_000,
    });
    req.on('upgrade', (_res, socket, head) => {
      if (this.closed) return void socket.destroy();
      this.socket = socket;
      this.buf = head.length > 0 ? Buffer.from(head) : Buffer.alloc(0);
      this.fragments = [];
      socket.setNoDelay?.(true);
      socket.on('data', (d: Buffer) => this.onData(d));
      socket.on('close', () => this.lost());
      socket.on('error', () => this.lost());
      socket.write(frame(1, Buffer.from('{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}')));
      if (this.buf.length > 0) this.onData(Buffer.alloc(0));
    });
    req.on('response', (res) => {
      res.resume();
      this.lost();
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => this.lost());
    req.end();
  }

  private lost(): void {
    if (this.socket !== null) {
      this.socket.destroy();
      this.socket = null;
    }
    if (this.subscribed) {
      this.subscribed = false;
      this.o.onState?.(false);
    }
    if (this.closed || this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, RECONNECT_MAX_MS);
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    for (;;) {
      const b = this.buf;
      if (b.length < 2) return;
      const fin = (b[0] & 0x80) !== 0;
      const opcode = b[0] & 0x0f;
      const masked = (b[1] & 0x80) !== 0;
      let len = b[1] & 0x7f;
      let at = 2;
      if (len === 126) {
        if (b.length < 4) return;
        len = b.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (b.length < 10) return;
        len = Number(b.readBigUInt64BE(2));
        at = 10;
      }
      if (len > MAX_MESSAGE_BYTES) return void this.lost();
      const maskAt = at;
      if (masked) at += 4;
      if (b.length < at + len) return;
      const payload = Buffer.from(b.subarray(at, at + len));
      if (masked) for (let i = 0; i < len; i++) payload[i] ^= b[maskAt + (i & 3)];
      this.buf = b.subarray(at + len);
      this.onFrame(fin, opcode, payload);
      if (this.socket === null) return;
    }
  }

  private onFrame(fin: boolean, opcode: number, payload: Buffer): void {
    if (opcode === 8) return void this.lost();
    if (opcode === 9) return void this.socket?.write(frame(10, payload));
    if (opcode === 10) return;
    if (opcode === 1 || opcode === 2 || opcode === 0) {
      this.fragments.push(payload);
      if (!fin) return;
      const text = Buffer.concat(this.fragments).toString('utf8');
      this.fragments = [];
      this.onMessage(text);
    }
  }

  private onMessage(text: string): void {
    let m: { id?: number; result?: unknown; method?: string; params?: { result?: { slot?: unknown } } };
    try {
      m = JSON.parse(text) as typeof m;
    } catch {
      return;
    }
    if (m.id === 1 && typeof m.result === 'number') {
      this.subscribed = true;
      this.backoffMs = RECONNECT_MIN_MS;
      this.o.onState?.(true);
      return;
    }
    const slot = m.method === 'slotNotification' ? m.params?.result?.slot : undefined;
    if (typeof slot === 'number' && Number.isSafeInteger(slot)) this.o.onSlot(slot);
  }
}
