// `slotrelay leaders` (cold, CLI): the next leader slots from getLeaderSlots (through the client library, with its
// spec 7.3 recovery) as a table for an operator: slot, leader, stake, location, the path a transaction reaches the
// leader over first, and the route score per region (`*` = the lowest). --json prints the result as the relay sent it.
// Exit 1 when the relay cannot say (the client's "use the default path") or refuses.
import { parseArgs } from 'node:util';
import type { LeaderSlotRow, LeaderSlotsResult } from '../types.js';
import { CLIENT_FLAGS, clientFromFlags, nonNegativeIntFlag, positiveIntFlag, printFailure } from './common.js';

const DEFAULT_ROWS = 12;
const LAMPORTS_PER_SOL = 1e9;

function shortKey(k: string): string {
  return k.length <= 14 ? k : `${k.slice(0, 6)}..${k.slice(-6)}`;
}

function sol(lamports: number): string {
  return (lamports / LAMPORTS_PER_SOL).toLocaleString('en-US', { maximumFractionDigits: 0 });
}

function cells(row: LeaderSlotRow): string[] {
  const path = row.txPaths.find((p) => p.selected);
  const scores = row.routeScores.map((s) => `${s.active_region} ${s.score_ms}${s.selected ? '*' : ''}`).join('  ');
  return [
    String(row.slot),
    shortKey(row.identity),
    sol(row.stake),
    row.location === undefined ? '-' : `${row.location.region}/${row.location.dataCenterKey}`,
    path === undefined ? '-' : `${path.provider} ${path.latencyMs} ms${path.measured ? '' : ' (est.)'}`,
    scores === '' ? '-' : scores,
  ];
}

/** The table, columns padded to their widest cell; consecutive slots of one leader are its window. */
export function leadersTable(res: LeaderSlotsResult): string {
  const head = ['slot', 'leader', 'stake (SOL)', 'location', 'first path', 'score ms by region (* lowest)'];
  const rows = [head, ...res.data.map(cells)];
  const widths = head.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd());
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  lines.push(`snapshot slot ${res.snapshotSlot}, ${res.snapshotAgeMs} ms old; ${res.total} rows`);
  return lines.join('\n');
}

/** Runs `slotrelay leaders`; resolves with the exit code. */
export async function runLeaders(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { ...CLIENT_FLAGS, start: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
    strict: true,
  });
  const start = nonNegativeIntFlag('start', values.start);
  const limit = positiveIntFlag('limit', values.limit) ?? DEFAULT_ROWS;
  const client = clientFromFlags(values, env);
  try {
    const res = await client.getLeaderSlots(start, limit);
    process.stdout.write((values.json ? JSON.stringify(res) : leadersTable(res)) + '\n');
    return 0;
  } catch (err) {
    return printFailure(err);
  }
}
