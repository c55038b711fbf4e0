// `slotrelay fees` (cold, CLI): percentiles of recent prioritization fees (getRecentPrioritizationFees through the
// client library), network-wide or for the slots touching --addresses, and the compute-unit price the library would
// pick (p75, spec 4.2). Micro-lamports per compute unit. Exit 1 when the relay refuses or does not answer.
import { parseArgs } from 'node:util';
import { DEFAULT_PRICE_PERCENTILE, feePercentile } from '../fees.js';
import type { PrioritizationFee } from '../types.js';
import { CLIENT_FLAGS, clientFromFlags, printFailure } from './common.js';

const SHOWN = [50, 75, 90, 100] as const;

export interface FeeSummary {
  readonly slots: number;
  readonly nonZeroSlots: number;
  readonly firstSlot: number | null;
  readonly lastSlot: number | null;
  readonly p50: number;
  readonly p75: number;
  readonly p90: number;
  readonly max: number;
  /** computeUnitPrice() with its default percentile. */
  readonly computeUnitPrice: number;
}

export function summarizeFees(fees: readonly PrioritizationFee[]): FeeSummary {
  const [p50, p75, p90, max] = SHOWN.map((p) => feePercentile(fees, p));
  return {
    slots: fees.length,
    nonZeroSlots: fees.filter((f) => f.prioritizationFee > 0).length,
    firstSlot: fees.length === 0 ? null : Math.min(...fees.map((f) => f.slot)),
    lastSlot: fees.length === 0 ? null : Math.max(...fees.map((f) => f.slot)),
    p50,
    p75,
    p90,
    max,
    computeUnitPrice: feePercentile(fees, DEFAULT_PRICE_PERCENTILE),
  };
}

function text(s: FeeSummary, scope: string): string {
  const range = s.firstSlot === null ? 'no slots' : `slots ${s.firstSlot}..${s.lastSlot}`;
  return [
    `prioritization fees, ${scope}: ${s.slots} slots (${range}), ${s.nonZeroSlots} with a non-zero fee`,
    `  p50 ${s.p50}   p75 ${s.p75}   p90 ${s.p90}   max ${s.max}   (micro-lamports per compute unit)`,
    `compute-unit price (p${DEFAULT_PRICE_PERCENTILE}): ${s.computeUnitPrice}`,
  ].join('\n');
}

/** Runs `slotrelay fees`; resolves with the exit code. */
export async function runFees(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { ...CLIENT_FLAGS, addresses: { type: 'string' }, json: { type: 'boolean' } }, strict: true });
  const addresses = values.addresses === undefined ? undefined : values.addresses.split(',').map((a) => a.trim()).filter((a) => a !== '');
  const client = clientFromFlags(values, env);
  try {
    const s = summarizeFees(await client.getRecentPrioritizationFees(addresses));
    process.stdout.write((values.json ? JSON.stringify(s) : text(s, addresses === undefined ? 'network-wide' : `${addresses.length} address(es)`)) + '\n');
    return 0;
  } catch (err) {
    return printFailure(err);
  }
}
