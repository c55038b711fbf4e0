// Starts the real relay (dist/src/cli.js start) as a child process on loopback with ephemeral ports, from a config
// written for the test. Tests talk to it only over HTTP, like users do.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { stringify } from 'yaml';

export const TEST_KEY = '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19';
export const OTHER_KEY = 'a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d';

export interface RelayHandle {
  readonly rpcUrl: string;
  readonly relayUrl: string;
  /** ws://host:port of the JSON-RPC host's PubSub (the `pubsub` listener), '' when it is off. */
  readonly wsUrl: string;
  /** The QUIC ingress's UDP address (relayHost.quicPort: -1 in the test's config), null when it is off (the default here). */
  readonly quic: { readonly host: string; readonly port: number } | null;
  /** http://host:port of the admin listener (the status page), '' when it is off. */
  readonly adminUrl: string;
  readonly logs: string[];
  readonly child: ChildProcess;
  /** The config file the relay was started with (a reload test rewrites it). */
  readonly configFile: string;
  /** The config as written (the test's fields over the helper's defaults). */
  readonly config: Record<string, unknown>;
  /** Send a signal and resolve with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function defaultKeys(): Record<string, unknown>[] {
  return [
    { key: TEST_KEY, name: 'test-bot', rateLimit: { perSecond: 10_000, burst: 10_000 } },
    { key: OTHER_KEY, name: 'tight-bot', rateLimit: { perSecond: 1, burst: 3 }, preflight: 'reject' },
  ];
}

export async function startRelay(config: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<RelayHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-test-'));
  const file = join(dir, 'config.yaml');
  const full = {
    rpcHost: { host: '127.0.0.1', port: 0 },
    admin: { port: 0 }, // the status page's default 8890 is one per host
    // QUIC ingress off unless a test asks (relayHost.quicPort: -1 = ephemeral): the default 4433 would collide
    // between relays started at once.
    relayHost: { host: '127.0.0.1', port: 0, quicPort: 0 },
    // 1,024 slots (production: 4,096): the tests' bursts fit even when a consumer lags a few ms on a busy box (a full
    // ring answers 503 overloaded: honest, but only the overload tests are about it, and they set their own rings).
    rings: { workers: 1, slotsPerRing: 1024 },
    log: { level: 'info' },
    keys: defaultKeys(),
    ...config,
  };
  writeFileSync(file, stringify(full));
  const child = spawn(process.execPath, ['dist/src/cli.js', 'start', '--config', file], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, ...env },
  });
  const logs: string[] = [];
  // 'close', not 'exit': the child's last lines may still be in its pipes when it exits.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  createInterface({ input: child.stderr! }).on('line', (l) => logs.push(l));
  const ready = await new Promise<{ listeners: { name: string; host: string; port: number }[] }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`relay did not start:\n${logs.join('\n')}`)), 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`relay exited with ${String(code)}:\n${logs.join('\n')}`));
    });
    createInterface({ input: child.stdout! }).on('line', (l) => {
      logs.push(l);
      if (!l.startsWith('{')) return;
      try {
        const m = JSON.parse(l) as { event?: string; listeners?: { name: string; host: string; port: number }[] };
        if (m.event === 'relay_ready' && m.listeners) {
          clearTimeout(timer);
          resolve({ listeners: m.listeners });
        }
      } catch {
        /* not a log line */
      }
    });
  });
  // A relay that dies under a test shows up as ECONNRESET / ECONNREFUSED in the test: print why it died.
  let stopping = false;
  child.once('exit', (code, signal) => {
    if (!stopping) console.error(`relay exited unexpectedly (${String(code ?? signal)}); last log lines:\n${logs.slice(-40).join('\n')}`);
  });
  const url = (name: string): string => {
    const l = ready.listeners.find((x) => x.name === name);
    return l ? `http://${l.host}:${l.port}` : '';
  };
  return {
    rpcUrl: url('rpc'),
    relayUrl: url('relay'),
    wsUrl: url('pubsub').replace(/^http:/, 'ws:'),
    quic: ready.listeners.find((x) => x.name === 'quic') ?? null,
    adminUrl: url('admin'),
    logs,
    child,
    configFile: file,
    config: full,
    stop: (signal: NodeJS.Signals = 'SIGTERM') => {
      stopping = true;
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Several relays started side by side (each start is mostly waiting on its child's ready line, so three take about the
 * time of one). If one fails to start, the others are stopped before its error is thrown: a failed beforeAll leaves no
 * relay behind.
 */
export async function startRelays(specs: readonly { readonly config: Record<string, unknown>; readonly env?: NodeJS.ProcessEnv }[]): Promise<RelayHandle[]> {
  const settled = await Promise.allSettled(specs.map((s) => startRelay(s.config, s.env)));
  const started = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(started.map((r) => r.stop('SIGKILL')));
    throw failed.reason;
  }
  return started;
}
