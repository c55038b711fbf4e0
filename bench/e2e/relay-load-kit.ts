// Shared pieces of the end-to-end load benches (bench/e2e/send-transaction-load.ts, uws-build-compare.ts; harness
// process, cold): signed request bodies, the wrk Lua script that rotates through them, waiting for a child's ready
// line, the relay's own accept/refusal counters from /metrics, a process's CPU time from /proc, and the bare uWS bound
// (bare-uws-answer.ts: the same uWS answering a constant).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';

function sendBody(id: number, tx: Uint8Array): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'sendTransaction', params: [Buffer.from(tx).toString('base64'), { encoding: 'base64', skipPreflight: true }] });
}

/** `n` distinct signed transfers; `undecodable` holds the same bodies with each transaction cut short by 3-30 bytes. */
export function makeBodies(n: number): { valid: string[]; undecodable: string[] } {
  const payer = Keypair.generate();
  const valid: string[] = [];
  const undecodable: string[] = [];
  for (let i = 0; i < n; i++) {
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: 1 }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 + i }),
    );
    tx.sign(payer);
    const wire = tx.serialize();
    valid.push(sendBody(i, wire));
    // Valid base64 of a truncated transaction: decoded, then refused by the parser ("failed to fill whole buffer").
    undecodable.push(sendBody(i, wire.subarray(0, wire.length - 3 * (1 + (i % 10)))));
  }
  return { valid, undecodable };
}

/**
 * The headers @solana/web3.js 1.x sends with a JSON-RPC call on Node (undici's fetch), besides Host, Content-Type,
 * Content-Length and the key (captured from a Connection.sendRawTransaction against node:http): 11 headers in all,
 * where wrk's default request has 4.
 */
export const WEB3JS_HEADERS: Readonly<Record<string, string>> = {
  connection: 'keep-alive',
  'solana-client': 'js/1.99.0',
  accept: '*/*',
  'accept-language': '*',
  'sec-fetch-mode': 'cors',
  'user-agent': 'node',
  'accept-encoding': 'gzip, deflate',
};

/**
 * A wrk Lua script rotating through `bodies` (every request carries a distinct body) with `key` in x-api-key, and
 * `extraHeaders` (e.g. WEB3JS_HEADERS) on every request.
 */
export function writeScript(dir: string, name: string, bodies: readonly string[], key: string, extraHeaders: Readonly<Record<string, string>> = {}): string {
  const script = join(dir, `${name}.lua`);
  const extra = Object.entries(extraHeaders)
    .map(([h, v]) => `wrk.headers["${h}"] = "${v}"\n`)
    .join('');
  writeFileSync(
    script,
    'local bodies = {\n' + bodies.map((b) => `[==[${b}]==]`).join(',\n') + '\n}\nlocal i = 0\n' +
      'wrk.method = "POST"\nwrk.headers["content-type"] = "application/json"\nwrk.headers["x-api-key"] = "' + key + '"\n' + extra +
      'request = function()\n  i = i % #bodies + 1\n  return wrk.format(nil, "/", nil, bodies[i])\nend\n',
  );
  return script;
}

export function waitForLine(child: ChildProcess, event: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${event} not seen`)), 30_000);
    createInterface({ input: child.stdout! }).on('line', (l) => {
      if (!l.startsWith('{')) return;
      const m = JSON.parse(l) as Record<string, unknown>;
      if (m.event === event) {
        clearTimeout(t);
        resolve(m);
      }
    });
  });
}

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/** CPU microseconds used so far by the relay's main thread (the front) and by the whole process; null off Linux. */
export function cpuTimes(pid: number): { front: number; process: number } | null {
  const ticks = (path: string): number => {
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // from field 3 (state) on
    return Number(fields[11]) + Number(fields[12]); // utime + stime (fields 14 and 15)
  };
  try {
    return { front: (ticks(`/proc/${pid}/task/${pid}/stat`) * 1e6) / CLK_TCK, process: (ticks(`/proc/${pid}/stat`) * 1e6) / CLK_TCK };
  } catch {
    return null;
  }
}

/** The relay's own count of sendTransaction calls it answered with a signature, and what it refused, by reason. */
export interface RelayCounts {
  readonly ok: number;
  readonly rejected: Record<string, number>;
}

export async function relayCounts(url: string): Promise<RelayCounts> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const ok = Number(/slotrelay_requests_total\{host="rpc",method="sendTransaction",outcome="ok"\} (\d+)/.exec(text)?.[1] ?? 0);
  const rejected: Record<string, number> = {};
  for (const m of text.matchAll(/slotrelay_requests_total\{host="rpc",method="sendTransaction",outcome="([^"]+)"\} (\d+)/g)) {
    if (m[1] !== 'ok') rejected[m[1]] = Number(m[2]);
  }
  // A JSON-RPC refusal is counted in both families (requests_total by outcome, rejections_total by reason), a 401 or
  // 429 only in rejections_total: the larger of the two is the count.
  for (const m of text.matchAll(/slotrelay_rejections_total\{reason="([^"]+)"\} (\d+)/g)) rejected[m[1]] = Math.max(rejected[m[1]] ?? 0, Number(m[2]));
  return { ok, rejected };
}

/**
 * A bound's server (bare-uws-answer.ts) answering `answer` as a constant, or (`parse`) computing the relay's answer
 * from each request in JavaScript; resolves with its URL once it listens.
 */
export async function startBare(dir: string, answer: string, mode: 'constant' | 'parse' = 'constant'): Promise<{ child: ChildProcess; url: string }> {
  const file = join(dir, 'answer.json');
  writeFileSync(file, answer);
  const script = fileURLToPath(new URL('./bare-uws-answer.js', import.meta.url));
  const child = spawn(process.execPath, [script, file, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare-uws-answer exited ${String(code)}`)));
    createInterface({ input: child.stdout! }).once('line', (l) => resolve(Number(/^ready (\d+)$/.exec(l)?.[1] ?? NaN)));
  });
  if (!Number.isInteger(port)) throw new Error('bare-uws-answer did not say its port');
  return { child, url: `http://127.0.0.1:${port}` };
}
