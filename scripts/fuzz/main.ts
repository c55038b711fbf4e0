// `make fuzz`: the live fuzzer's command line (harness process; cold). Runs the harness against a freshly started
// relay, prints the summary, writes it as JSON when --json is given, and exits 1 when any case was not answered as
// specified (2 when the harness itself could not run).
//   node dist/scripts/fuzz/main.js [--cases 100000] [--seed N] [--concurrency 32] [--max-seconds 900]
//                                  [--timeout-ms 5000] [--examples 5] [--only i,j,k] [--json bench/results/fuzz.json]
//                                  [--quic-sessions 200] [--junk-bursts 12] [--slow-clients 32] [--reloads 60]
//                                  [--phase-seconds 300]
//                                  [--root DIR]   (another checkout whose dist/src/cli.js is started, e.g. an older build)
// The QUIC ingress phase (sessions of refused streams, junk-Initial bursts) and the keep-alive slow-client phase run
// after the HTTP cases on the same relay; 0 turns one off. --only replays HTTP cases alone.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runFuzz } from './harness.js';
import { formatSummary, notExpected } from './report.js';
import { randomSeed } from './rng.js';

function int(name: string, v: string | undefined, dflt: number, min: number, max: number): number {
  if (v === undefined || v === '') return dflt;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new Error(`--${name} must be an integer in [${min}, ${max}]`);
  return Number(v);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      cases: { type: 'string' },
      seed: { type: 'string' },
      concurrency: { type: 'string' },
      'max-seconds': { type: 'string' },
      'timeout-ms': { type: 'string' },
      examples: { type: 'string' },
      only: { type: 'string' },
      json: { type: 'string' },
      root: { type: 'string' },
      'quic-sessions': { type: 'string' },
      'junk-bursts': { type: 'string' },
      'slow-clients': { type: 'string' },
      reloads: { type: 'string' },
      'phase-seconds': { type: 'string' },
    },
    strict: true,
  });
  const seed = int('seed', values.seed, randomSeed(), 0, 0xffffffff);
  const only = values.only?.split(',').filter((x) => x !== '').map((x) => int('only', x.trim(), 0, 0, Number.MAX_SAFE_INTEGER));
  const opts = {
    cases: int('cases', values.cases, 100_000, 1, 100_000_000),
    seed,
    concurrency: int('concurrency', values.concurrency, 32, 1, 256),
    maxSeconds: int('max-seconds', values['max-seconds'], 900, 1, 86_400),
    timeoutMs: int('timeout-ms', values['timeout-ms'], 5_000, 100, 600_000),
    examples: int('examples', values.examples, 5, 0, 1_000),
    cwd: values.root !== undefined ? resolve(values.root) : resolve(dirname(fileURLToPath(import.meta.url)), '../../..'),
    ...(only === undefined ? {} : { only }),
    quicSessions: only === undefined ? int('quic-sessions', values['quic-sessions'], 200, 0, 100_000) : 0,
    junkBursts: only === undefined ? int('junk-bursts', values['junk-bursts'], 12, 0, 10_000) : 0,
    slowClients: only === undefined ? int('slow-clients', values['slow-clients'], 32, 0, 64) : 0,
    reloads: only === undefined ? int('reloads', values.reloads, 60, 0, 100_000) : 0,
    phaseMaxSeconds: int('phase-seconds', values['phase-seconds'], 300, 1, 86_400),
    log: (l: string) => process.stdout.write(l + '\n'),
  };
  process.stdout.write(`fuzz: seed ${seed}, ${only === undefined ? `${opts.cases} cases` : `cases ${only.join(',')}`}, concurrency ${opts.concurrency}, time bound ${opts.maxSeconds} s; QUIC ${opts.quicSessions} sessions + ${opts.junkBursts} junk bursts, ${opts.slowClients} slow clients, ${opts.reloads} broken-file reloads\n`);
  const summary = await runFuzz(opts);
  process.stdout.write(formatSummary(summary) + '\n');
  if (values.json !== undefined) {
    mkdirSync(dirname(values.json), { recursive: true });
    writeFileSync(values.json, JSON.stringify(summary, null, 2) + '\n');
    process.stdout.write(`summary written to ${values.json}\n`);
  }
  return notExpected(summary) === 0 ? 0 : 1;
}

// A signal ends the process through exit(), so the relay child is killed by relay-child.ts's exit handler.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`fuzz: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);
