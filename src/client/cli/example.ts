// `slotrelay example` (cold, CLI): the start banner's first transaction. Funds a fresh keypair on the cluster
// (--cluster, the embedded localnet's RPC: airdrop), submits one signed transfer to the relay with the key's default
// routes through the client library, then follows its landing receipt (GET {relay}/v1/transactions/{signature},
// docs/receipts.md) and prints where it landed: slot, leader, slots and ms from acceptance, the route that sent first.
// Exit 0 when it landed, 1 when it was refused or did not land in --wait-ms, 2 on bad usage.
import { parseArgs } from 'node:util';
import { ConfigError } from '../../config/load.js';
import { buildExampleTransaction } from '../example-transaction.js';
import { CLIENT_FLAGS, clientFromFlags, DEFAULT_RELAY_URL, errorJson, positiveIntFlag } from './common.js';

interface Receipt {
  readonly status: string;
  readonly routes: Record<string, { outcome: string; targets: number }>;
  readonly landed: { slot: number; leader: string | null; slotsToLand: number | null; msToLand: number; firstRoute: string | null; err: unknown } | null;
}

const POLL_MS = 100;

async function receiptOf(relay: string, key: string, signature: string): Promise<Receipt | null> {
  const res = await fetch(`${relay.replace(/\/+$/, '')}/v1/transactions/${signature}`, { headers: { 'x-api-key': key } });
  if (res.status !== 200) {
    await res.body?.cancel();
    return null;
  }
  return (await res.json()) as Receipt;
}

export async function runExample(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { ...CLIENT_FLAGS, cluster: { type: 'string' }, 'wait-ms': { type: 'string' } },
    strict: true,
  });
  if (values.cluster === undefined) throw new ConfigError('example needs --cluster URL (the JSON-RPC of a local cluster that airdrops: the embedded localnet)');
  const waitMs = positiveIntFlag('wait-ms', values['wait-ms']) ?? 30_000;
  const client = clientFromFlags(values, env);
  const key = values.key ?? env.SLOTRELAY_KEY ?? '';
  const relay = values.relay ?? DEFAULT_RELAY_URL;

  const tx = await buildExampleTransaction(values.cluster);
  let signature: string;
  let routes: readonly string[];
  try {
    const answer = await client.submit(tx, { routes: 'default', maxRetries: 0 });
    signature = answer.signature;
    routes = answer.routes;
  } catch (err) {
    process.stdout.write(JSON.stringify(errorJson(err)) + '\n');
    return 1;
  }
  process.stdout.write(`accepted ${signature} for ${routes.join('+')}\n`);
  const until = Date.now() + waitMs;
  let last: Receipt | null = null;
  while (Date.now() < until) {
    last = await receiptOf(relay, key, signature);
    if (last !== null && last.status !== 'pending') break;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  if (last === null || last.landed === null) {
    process.stdout.write(`not landed within ${waitMs} ms: ${JSON.stringify(last)}\n`);
    return 1;
  }
  const l = last.landed;
  const sent = Object.entries(last.routes)
    .map(([name, r]) => `${name} ${r.outcome}${r.targets > 0 ? ` to ${r.targets}` : ''}`)
    .join(', ');
  process.stdout.write(
    `landed in slot ${l.slot} (leader ${l.leader ?? 'unknown'}), ${l.slotsToLand ?? '?'} slots and ${l.msToLand} ms after acceptance; ` +
      `first sent by ${l.firstRoute ?? 'none'} (${sent})${l.err === null ? '' : `; failed on chain: ${JSON.stringify(l.err)}`}\n`,
  );
  process.stdout.write(JSON.stringify(last) + '\n');
  return 0;
}
