// Run parameters shared by the property tests in this folder: a fixed default seed per file (so CI runs are
// reproducible), overridable from the environment, and run counts sized for a busy 2-core box.
//   FC_SEED=<int>     replay with another seed (fast-check prints the seed and path of any failure)
//   FC_PATH=<path>    with FC_SEED: replay exactly the failing case fast-check printed
//   FC_RUNS_SCALE=<n> multiply every numRuns (e.g. 10 for a long local soak; 0.1 for a smoke run)
import type { Parameters } from 'fast-check';

function envNumber(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name}=${raw} is not a number`);
  return n;
}

/** fc.assert parameters: `defaultSeed` unless FC_SEED is set, `numRuns` scaled by FC_RUNS_SCALE. */
export function fcParams<T>(defaultSeed: number, numRuns: number): Parameters<T> {
  const seed = envNumber('FC_SEED') ?? defaultSeed;
  const scale = envNumber('FC_RUNS_SCALE') ?? 1;
  const path = process.env.FC_PATH;
  return {
    seed,
    numRuns: Math.max(1, Math.round(numRuns * scale)),
    ...(path !== undefined && path !== '' ? { path } : {}),
  };
}
