// `slotrelay send` (cold, CLI): submits one signed transaction through the client library and prints the relay's
// JSON answer. The transaction comes from the argument (base64), --file (wire bytes or base64 text) or stdin (the
// same, when the argument is `-` or absent and stdin is not a terminal). Exit 0 accepted, 1 refused or no answer
// (the answer is still printed as JSON: {accepted:false, status, error:{code, reason, message, data}, retryAfterMs}),
// 2 bad usage. --transport quic sends over the relay's QUIC ingress (--quic HOST:PORT, default the relay's host and
// port 4433) through `slotrelay/client/quic`; --fire-and-forget sends on a uni stream and prints the unacknowledged result.
// Every format goes as it is, v1 (SIMD-0385, message first) included; a refusal's JSON also carries the transaction's
// id read from its bytes (`signature`, after the message for v1), when the bytes are one transaction.
// --wait processed|finalized: after the answer, one JSON line per state of the receipt as the relay pushes it
// (receiptsFor, docs/receipts.md "The receipt stream") until that state; exit 1 when it ends not landed first.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError } from '../../config/load.js';
import { ROUTE_NAMES, type RouteName } from '../types.js';
import { quicTransport } from '../quic/quic-transport.js';
import { WireTransaction } from '../wire-transaction.js';
import type { RelayClient } from '../relay-client.js';
import type { ReceiptUpdate } from '../types.js';
import { CLIENT_FLAGS, clientFromFlags, errorJson, nonNegativeIntFlag } from './common.js';

const BASE64_TEXT = /^[A-Za-z0-9+/=\s]+$/;

/** File or stdin content: base64 text (whitespace ignored) or the wire bytes themselves. */
function transactionFrom(content: Buffer): string | Uint8Array {
  const text = content.toString('latin1');
  if (content.length > 0 && BASE64_TEXT.test(text)) return text.replace(/\s+/g, '');
  return new Uint8Array(content);
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function routesFlag(v: string | undefined): readonly RouteName[] | 'default' | undefined {
  if (v === undefined || v === 'default') return v;
  const names = v.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !(ROUTE_NAMES as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0) throw new ConfigError(`--routes: unknown route ${JSON.stringify(unknown[0] ?? v)}; known routes: ${ROUTE_NAMES.join(', ')}, or default`);
  return names as RouteName[];
}

/** The transaction's id from its own bytes, or null when they are not one wire transaction. */
function signatureOf(tx: string | Uint8Array): string | null {
  try {
    return WireTransaction.from(tx).signature;
  } catch {
    return null;
  }
}

/** One state as a line: what changed, and what the receipt says about it. */
function updateLine(u: ReceiptUpdate): string {
  const r = u.receipt;
  const line: Record<string, unknown> = { event: u.event, signature: u.signature, at: u.at, status: r.status };
  if (u.route !== undefined) Object.assign(line, { route: u.route, outcome: u.outcome });
  // A skipped target slot: which one (the receipt goes on pending; a rebroadcast may still land it).
  if (u.event === 'skipped' || (u.event === 'current' && r.targetSkipped != null)) line.skippedSlot = u.slot ?? r.targetSkipped?.slot;
  if (r.landed !== null) Object.assign(line, { slot: r.landed.slot, leader: r.landed.leader, confirmationStatus: r.landed.confirmationStatus, execution: r.landed.execution });
  if (r.reason != null) line.reason = r.reason;
  return JSON.stringify(line) + '\n';
}

/** Prints each pushed state until `until` (exit 0) or not landed (exit 1). */
async function waitFor(client: RelayClient, signature: string, until: 'processed' | 'finalized'): Promise<number> {
  const reached = (u: ReceiptUpdate): boolean =>
    u.event === until || (until === 'processed' && (u.event === 'confirmed' || u.event === 'finalized')) || (u.event === 'current' && u.receipt.landed !== null && (until === 'processed' || u.receipt.landed.confirmationStatus === 'finalized'));
  for await (const u of client.receiptsFor(signature)) {
    process.stdout.write(updateLine(u));
    if (reached(u)) return 0;
    if (u.event === 'not_landed' || (u.event === 'current' && u.receipt.status === 'not_landed')) return 1;
  }
  return 1;
}

/** Runs `slotrelay send`; resolves with the exit code. */
export async function runSend(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      ...CLIENT_FLAGS,
      file: { type: 'string' },
      routes: { type: 'string' },
      'max-retries': { type: 'string' },
      transport: { type: 'string' },
      quic: { type: 'string' },
      'fire-and-forget': { type: 'boolean' },
      wait: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 1 || (positionals.length === 1 && values.file !== undefined)) throw new ConfigError('send takes one transaction: an argument, --file PATH, or stdin');
  const transport = values.transport ?? 'http';
  if (transport !== 'http' && transport !== 'quic') throw new ConfigError('--transport must be http or quic');
  if (transport !== 'quic' && (values.quic !== undefined || values['fire-and-forget'] === true)) throw new ConfigError('--quic and --fire-and-forget go with --transport quic');
  let factory: ReturnType<typeof quicTransport> | undefined;
  try {
    factory = transport === 'quic' ? quicTransport({ address: values.quic }) : undefined;
  } catch (err) {
    throw new ConfigError(`--quic: ${(err as Error).message}`);
  }
  const wait = values.wait;
  if (wait !== undefined && wait !== 'processed' && wait !== 'finalized') throw new ConfigError('--wait must be processed or finalized');
  if (wait !== undefined && values['fire-and-forget'] === true) throw new ConfigError('--wait needs an acknowledged submit, not --fire-and-forget');
  const routes = routesFlag(values.routes);
  const maxRetries = nonNegativeIntFlag('max-retries', values['max-retries']);

  let tx: string | Uint8Array;
  if (values.file !== undefined) tx = transactionFrom(readFileSync(values.file));
  else if (positionals.length === 1 && positionals[0] !== '-') tx = positionals[0].trim();
  else if (positionals[0] === '-' || !process.stdin.isTTY) tx = transactionFrom(await readStdin());
  else throw new ConfigError('no transaction: pass it as an argument (base64), with --file PATH, or on stdin');
  if (tx.length === 0) throw new ConfigError('the transaction is empty');

  const client: RelayClient = clientFromFlags(values, env, { transport: factory ?? 'http' });
  let answer: Record<string, unknown>;
  let code = 0;
  try {
    answer = { ...(await client.submit(tx, { routes, maxRetries, fireAndForget: values['fire-and-forget'] === true })) };
    if (wait !== undefined) {
      process.stdout.write(JSON.stringify(answer) + '\n');
      return await waitFor(client, String(answer.signature), wait);
    }
  } catch (err) {
    if (err instanceof TypeError) throw new ConfigError(err.message);
    answer = errorJson(err);
    const signature = signatureOf(tx);
    if (signature !== null) answer.signature = signature;
    code = 1;
  } finally {
    await client.close();
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
  return code;
}
