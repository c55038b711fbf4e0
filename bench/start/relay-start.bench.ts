// `make bench-start`: how long a relay takes from its spawn to `relay_ready`, and how much CPU (every thread of the
// process, from /proc/<pid>/stat) it spent getting there. What an operator waits for after a restart (systemd's
// Restart=, a deploy) and what every integration test pays per relay it starts. Driver process, cold.
//
// Each run spawns `node <cli> start --config <file>` with the tests' relay config (upstream unreachable: no leader
// data to wait for, so the figure is the relay's own start: module loading, threads, listeners, egress warm), reads
// its stdout until the `relay_ready` line, reads the CPU then, and kills it. With --baseline-cli the two builds run
// alternately (A, B, A, B, ...) so that a noisy host weighs on both alike; the report gives medians per build and the
// ratio of medians.
//   node dist/bench/start/relay-start.bench.js [--runs 12] [--baseline-cli /tmp/wt-base/dist/src/cli.js]
//     [--json bench/results/relay-start.json] [--md bench/results/relay-start.md]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ: 100 on Linux). */
const USER_HZ = 100;
const READY_TIMEOUT_MS = 30_000;

interface Run {
  readonly build: string;
  readonly readyMs: number;
  readonly cpuMs: number;
}

/** utime + stime of the whole process (all its threads), in ms. */
function processCpuMs(pid: number): number {
  // Fields after the command name's closing parenthesis: state is the 3rd field, utime the 14th, stime the 15th.
  const after = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(after[11]) + Number(after[12])) * 1000) / USER_HZ;
}

function startOnce(cli: string, configFile: string, build: string): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [cli, 'start', '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    const stderr: string[] = [];
    createInterface({ input: child.stderr }).on('line', (l) => stderr.push(l));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${build}: no relay_ready within ${READY_TIMEOUT_MS} ms\n${stderr.join('\n')}`));
    }, READY_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${build}: relay exited with ${String(code)} before ready\n${stderr.join('\n')}`));
    });
    createInterface({ input: child.stdout }).on('line', (l) => {
      if (!l.includes('"relay_ready"')) return;
      const readyMs = performance.now() - t0;
      const cpuMs = processCpuMs(child.pid!);
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.once('exit', () => resolvePromise({ build, readyMs, cpuMs }));
      child.kill('SIGKILL');
    });
  });
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '12' },
      cli: { type: 'string', default: join(ROOT, 'dist/src/cli.js') },
      'baseline-cli': { type: 'string' },
      json: { type: 'string', default: join(ROOT, 'bench/results/relay-start.json') },
      md: { type: 'string', default: join(ROOT, 'bench/results/relay-start.md') },
    },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs must be a positive integer');
  const dir = mkdtempSync(join(tmpdir(), 'relay-start-bench-'));
  const configFile = join(dir, 'config.yaml');
  // The config test/helpers/relay-process.ts starts (listeners on ephemeral ports, one egress worker, QUIC ingress off).
  writeFileSync(
    configFile,
    stringify({
      rpcHost: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 },
      relayHost: { host: '127.0.0.1', port: 0, quicPort: 0 },
      rings: { workers: 1, slotsPerRing: 1024 },
      log: { level: 'info' },
      upstream: { rpcUrl: 'http://127.0.0.1:9' },
      keys: [{ key: '3f0b8f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b', name: 'bench' }],
    }),
  );
  const builds: [string, string][] = [['this build', values.cli]];
  if (values['baseline-cli'] !== undefined) builds.push(['baseline', values['baseline-cli']]);
  const all: Run[] = [];
  try {
    // One unmeasured start per build first: the page cache and the quiche binary's first load.
    for (const [name, cli] of builds) await startOnce(cli, configFile, name);
    for (let i = 0; i < runs; i++) {
      for (const [name, cli] of i % 2 === 0 ? builds : [...builds].reverse()) {
        const r = await startOnce(cli, configFile, name);
        all.push(r);
        console.log(`${name}: ready ${r.readyMs.toFixed(0)} ms, CPU ${r.cpuMs.toFixed(0)} ms`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const summary = builds.map(([name, cli]) => {
    const mine = all.filter((r) => r.build === name);
    return {
      build: name,
      cli,
      runs: mine.length,
      readyMs: { median: Math.round(median(mine.map((r) => r.readyMs))), min: Math.round(Math.min(...mine.map((r) => r.readyMs))), max: Math.round(Math.max(...mine.map((r) => r.readyMs))) },
      cpuMs: { median: Math.round(median(mine.map((r) => r.cpuMs))), min: Math.round(Math.min(...mine.map((r) => r.cpuMs))), max: Math.round(Math.max(...mine.map((r) => r.cpuMs))) },
    };
  });
  const at = new Date().toISOString();
  const host = `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`;
  writeFileSync(values.json, JSON.stringify({ at, host, runs: all, summary }, null, 2) + '\n');
  const lines = [
    '# Relay start: spawn -> relay_ready, and the CPU spent until then',
    '',
    `Generated by \`make bench-start\` (node dist/bench/start/relay-start.bench.js${values['baseline-cli'] !== undefined ? ' --baseline-cli ' + values['baseline-cli'] : ''} --runs ${runs}), ${at}; ${host}; builds alternate.`,
    '',
    '| build | runs | ready median (min-max) ms | CPU median (min-max) ms |',
    '|---|---|---|---|',
    ...summary.map((s) => `| ${s.build} | ${s.runs} | ${s.readyMs.median} (${s.readyMs.min}-${s.readyMs.max}) | ${s.cpuMs.median} (${s.cpuMs.min}-${s.cpuMs.max}) |`),
  ];
  if (summary.length === 2) {
    lines.push('', `this build / baseline, medians: ready ${(summary[0].readyMs.median / summary[1].readyMs.median).toFixed(2)}, CPU ${(summary[0].cpuMs.median / summary[1].cpuMs.median).toFixed(2)}.`);
  }
  writeFileSync(values.md, lines.join('\n') + '\n');
  console.log(lines.join('\n'));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
