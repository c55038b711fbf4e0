// The QUIC thread bench rig (bench helper, main thread of a bench): the relay's real EgressPool with its route plan
// (static route to the given sinks, rings.quicThreads threads), the QUIC ingress listener hosted in QUIC thread 0 as the
// relay hosts it, its front half a stub (ingress-front-stub.ts), an ingress load client in its own process, a paced
// ring producer thread in the front's role, and the sinks (tpu-sink-worker.ts). Used by quic-thread.bench.ts (one QUIC
// thread, one target) and quic-threads.bench.ts (1 vs N QUIC threads over several targets).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import { buildRoutePlan } from '../../src/config/route-plan.js';
import { configSchema } from '../../src/config/schema.js';
import { generateKeypairSecret } from '../../src/egress/quic/identity.js';
import { EgressPool } from '../../src/egress/consumer/pool.js';
import { createLogger } from '../../src/log/logger.js';
import { EGRESS_OUTCOMES, ROUTE_IDS, egressCounterIndex } from '../../src/shm/layout.js';
import { IngressTaskRunner } from '../../src/ingress/ingress-task-runner.js';
import { createRandomIdentityCertificate } from '../../src/quic/identity-certificate.js';
import { IngressFrontStub } from './ingress-front-stub.js';

export const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
export const STATIC = 1 << ROUTE_IDS.static;
/** Connections of the ingress load client. */
export const INGRESS_CONNECTIONS = 2;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
export const quinnDir = join(repoRoot, 'out', 'quinn');
export const sinkKind: 'quinn' | 'localnet' = existsSync(join(quinnDir, 'quinn-tpu-sink')) && existsSync(join(quinnDir, 'server.key.der')) ? 'quinn' : 'localnet';

export function startSink(printTx: boolean): Promise<{ worker: Worker; port: number }> {
  const worker = new Worker(new URL('./tpu-sink-worker.js', import.meta.url), { workerData: { kind: sinkKind, quinnDir, printTx } });
  return new Promise((r) => worker.once('message', (m: { port: number }) => r({ worker, port: m.port })));
}
/** Stops a sink and waits for its thread to end (it ends the quinn process first: none is left behind). */
export function stopSink(w: Worker): Promise<unknown> {
  const ended = new Promise((r) => w.once('exit', r));
  w.postMessage('stop');
  return ended;
}
export function ask<T>(w: Worker, msg: string): Promise<T> {
  return new Promise((r) => {
    w.once('message', (m: T) => r(m));
    w.postMessage(msg);
  });
}

const secret = generateKeypairSecret();
const log = createLogger('silent', 'bench');

/** The relay's QUIC thread as the relay wires it: the pool with its route plan, the ingress listener hosted in it. */
export interface Rig {
  readonly pool: EgressPool;
  readonly ingress: IngressTaskRunner;
  readonly front: IngressFrontStub;
  readonly address: { host: string; port: number };
}

const serverCert = await createRandomIdentityCertificate();

/**
 * `retries`: the config's retries section (default: no rebroadcast) and `upstreamUrl` (the rebroadcast's status polls;
 * default none), for rebroadcast-tail.bench.ts.
 */
export async function rigFor(
  sinkPorts: number | readonly number[],
  quicThreads = 1,
  retries: Record<string, unknown> = { defaultMaxRetries: 0 },
  upstreamUrl?: string,
): Promise<Rig> {
  const ports = typeof sinkPorts === 'number' ? [sinkPorts] : sinkPorts;
  const config = configSchema.parse({
    rings: { workers: 1, slotsPerRing: 4096, quicThreads },
    routes: { static: { peers: ports.map((p) => `127.0.0.1:${p}`), everyTransaction: false }, direct: { staleAfterMs: 30_000, maxQueuedPerConnection: 4096 } },
    retries,
    ...(upstreamUrl === undefined ? {} : { upstream: { rpcUrl: upstreamUrl } }),
    telemetry: { enabled: false },
    relayHost: { host: '127.0.0.1', quicPort: -1 },
    log: { level: 'silent' },
  });
  const plan = buildRoutePlan(config);
  const pool = new EgressPool({ config, log, identitySecret: secret, plan });
  if (pool.quicRing === null || !plan.ingress) throw new Error('route plan: no QUIC thread or no ingress');
  pool.start();
  const q = config.relayHost.quic;
  const ingress = new IngressTaskRunner(
    {
      host: '127.0.0.1',
      port: 0,
      keyPem: serverCert.keyPem,
      certPem: serverCert.certPem,
      maxConnections: q.maxConnections,
      maxConnectionsPerKey: q.maxConnectionsPerKey,
      maxConcurrentStreams: q.maxConcurrentStreams,
      maxTransactionBytes: config.transactions.maxTransactionBytes,
      idleTimeoutMs: q.idleTimeoutMs,
      streamTimeoutMs: q.streamTimeoutMs,
      replyTimeoutMs: q.replyTimeoutMs,
      holdTimeoutMs: q.holdTimeoutMs,
    },
    q.queueSlots,
    log,
    undefined,
    (task, transferList) => pool.hostInQuicThread('quic-ingress', task, transferList),
  );
  const front = new IngressFrontStub(ingress.channels);
  front.start();
  const address = await ingress.start();
  return { pool, ingress, front, address };
}

export async function stopRig(r: Rig): Promise<Awaited<ReturnType<EgressPool['drain']>>> {
  await r.ingress.stop();
  await r.front.stop();
  return r.pool.drain(5_000);
}

export interface LoadResult {
  written: number;
  issued: number;
  seconds: number;
  offeredPerS: number;
}

/** The ingress load client in its own process; resolves once its connections are up. */
export async function startLoad(address: { host: string; port: number }, ingressRate: number): Promise<{ stop(): Promise<LoadResult> }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./ingress-load-client.js', import.meta.url)), address.host, String(address.port), String(ingressRate), String(INGRESS_CONNECTIONS), '60000'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const next = (event: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const onLine = (l: string): void => {
        try {
          const m = JSON.parse(l) as Record<string, unknown>;
          if (m.event !== event) return;
          lines.off('line', onLine);
          resolve(m);
        } catch {
          // not ours
        }
      };
      lines.on('line', onLine);
      child.once('exit', (code) => reject(new Error(`ingress load client exited ${String(code)} before '${event}'`)));
    });
  await next('ready');
  return {
    stop: async () => {
      const done = next('done');
      child.stdin!.write('stop\n');
      const m = await done;
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      return { written: Number(m.written), issued: Number(m.issued), seconds: Number(m.seconds), offeredPerS: Number(m.offeredPerS) };
    },
  };
}

/** `maxRetries`: each record's (0: sent once; -1: the config's retries.defaultMaxRetries). */
export function produce(ring: SharedArrayBuffer, rate: number, ms: number, maxRetries = 0): Promise<{ published: number; ringFull: number; meanLateUs: number }> {
  const w = new Worker(new URL('./ring-producer-worker.js', import.meta.url), { workerData: { ring, rate, ms, mask: STATIC, maxRetries } });
  return new Promise((r) => w.once('message', r));
}

/** A connection to the sink exists and took one transaction (no handshake inside the measured part). */
export async function warm(pool: EgressPool): Promise<void> {
  await produce(pool.quicRing!, 100, 300);
  const deadline = Date.now() + 10_000;
  while (pool.summedCounters()[egressCounterIndex(ROUTE_IDS.static, EGRESS_OUTCOMES.indexOf('sent'))] < 10) {
    if (Date.now() > deadline) throw new Error('the QUIC thread sent nothing to the sink');
    await sleep(20);
  }
}

/** The load client runs and the listener accepts its streams (a connection's handshake is not in the window). */
export async function busy(r: Rig, ingressRate: number): Promise<{ stop(): Promise<LoadResult> }> {
  const load = await startLoad(r.address, ingressRate);
  const before = r.front.uniStreams;
  const deadline = Date.now() + 10_000;
  while (r.front.uniStreams - before < 1_000) {
    if (Date.now() > deadline) throw new Error('the ingress accepted no stream from the load client');
    await sleep(20);
  }
  await sleep(300);
  return load;
}
