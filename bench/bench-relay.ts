// A real relay (dist/src/cli.js start) with its embedded localnet for the JSON-RPC host benches (bench process, cold):
// ephemeral ports, one key with a read budget the bench cannot exhaust; resolves once both the relay's JSON-RPC URL
// and the localnet's URL (from its localnet_started line) are known.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

export const BENCH_KEY = '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19';
const KEY = BENCH_KEY;
const root = fileURLToPath(new URL('../..', import.meta.url));

export interface BenchRelay {
  readonly child: ChildProcess;
  readonly rpcUrl: string;
  readonly relayUrl: string;
  readonly localnetUrl: string;
  /** The localnet's Jito-compatible block engine (the relay's default bundle service). */
  readonly blockEngineUrl: string;
  /** The QUIC ingress's UDP address when the config turns it on (relayHost.quicPort), else null. */
  readonly quic: { readonly host: string; readonly port: number } | null;
}

/**
 * `keyPlan` is merged into the bench key's plan (e.g. bundles: true and a rate limit the bench cannot exhaust), `config`
 * into the relay's config (e.g. its localnet: section).
 */
export async function startBenchRelay(
  readPerSecond: number,
  keyPlan: Record<string, unknown> = {},
  config: Record<string, unknown> = {},
  /** Added to the relay's environment (e.g. MALLOC_ARENA_MAX for an allocator comparison). */
  env: Readonly<Record<string, string>> = {},
  /**
   * nodeArgs: Node flags before the script (e.g. --cpu-prof, which NODE_OPTIONS does not allow; worker threads inherit
   * them). cli: another build's cli.js (a before/after pair in one run), default this checkout's dist/src/cli.js.
   */
  launch: { readonly nodeArgs?: readonly string[]; readonly cli?: string } = {},
): Promise<BenchRelay> {
  const dir = mkdtempSync(join(os.tmpdir(), 'slotrelay-bench-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    stringify({
      rpcHost: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 }, // the status page's default 8890 is one per host
      relayHost: { host: '127.0.0.1', port: 0, quicPort: 0 }, // no QUIC ingress: 4433 would collide between relays
      rings: { workers: 1, slotsPerRing: 256 },
      log: { level: 'warn' },
      keys: [{ key: KEY, name: 'bench', readLimit: { perSecond: readPerSecond, burst: readPerSecond }, ...keyPlan }],
      ...config,
    }),
  );
  // info for the localnet_started line (which carries the localnet's URL); the relay's own lines are few.
  const child = spawn(process.execPath, [...(launch.nodeArgs ?? []), launch.cli ?? join(root, 'dist/src/cli.js'), 'start', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, SLOTRELAY_LOG_LEVEL: 'info', ...env } });
  let rpcUrl = '';
  let relayUrl = '';
  // A relay following another one's localnet (config upstream.rpcUrl) prints no localnet_started line.
  let localnetUrl = (config.upstream as { rpcUrl?: string } | undefined)?.rpcUrl ?? '';
  let blockEngineUrl = '';
  let quic: { host: string; port: number } | null = null;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('relay did not start')), 60_000);
    child.once('exit', (code) => reject(new Error(`relay exited ${String(code)}`)));
    const onLine = (l: string): void => {
      if (!l.startsWith('{')) return;
      try {
        const m = JSON.parse(l) as { event?: string; rpcUrl?: string; blockEngineUrl?: string; listeners?: { name: string; host: string; port: number }[] };
        if (m.event === 'localnet_started' && m.rpcUrl) {
          localnetUrl = m.rpcUrl;
          blockEngineUrl = m.blockEngineUrl ?? '';
        }
        if (m.event === 'relay_ready' && m.listeners) {
          const l2 = m.listeners.find((x) => x.name === 'rpc')!;
          rpcUrl = `http://${l2.host}:${l2.port}`;
          const l3 = m.listeners.find((x) => x.name === 'relay');
          relayUrl = l3 === undefined ? '' : `http://${l3.host}:${l3.port}`;
          quic = m.listeners.find((x) => x.name === 'quic') ?? null;
        }
        if (rpcUrl !== '' && localnetUrl !== '') {
          clearTimeout(timer);
          resolve();
        }
      } catch {
        /* not a log line */
      }
    };
    createInterface({ input: child.stdout! }).on('line', onLine);
    createInterface({ input: child.stderr! }).on('line', onLine);
  });
  return { child, rpcUrl, relayUrl, localnetUrl, blockEngineUrl, quic };
}
