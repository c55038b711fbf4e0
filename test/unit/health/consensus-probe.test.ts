// Which consensus the relay believes the cluster runs, asked the way the relay asks it (the health monitor's
// ConsensusProbe, src/telemetry/consensus-probe.ts) of a real HTTP JSON-RPC server: the certificate -> alpenglow,
// null -> tower, -32601 -> tower (a pre-4.3 node), no answer -> the last verdict kept with the cause; asked once at
// start and again after the upstream was lost and came back (a reconnect may be another cluster), not on every tick.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/log/logger.js';
import { HealthMonitor } from '../../../src/health/health-monitor.js';
import { ConsensusProbe } from '../../../src/telemetry/consensus-probe.js';
import { until } from '../../helpers/wait-for.js';

const CERT = { block: { slot: 459_652_999, blockId: new Array(32).fill(7) }, signature: { signature: new Array(192).fill(1), bitmap: [255] } };

let answer: unknown = null;
let asked = 0;
let server: Server | null = null;

function listen(port = 0): Promise<number> {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      res.setHeader('content-type', 'application/json');
      if (method === 'getAgGenesisCert') asked++;
      if (method === 'getAgGenesisCert' && answer === 'missing') res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } }));
      else res.end(JSON.stringify({ jsonrpc: '2.0', id, result: method === 'getAgGenesisCert' ? answer : 'ok' }));
    });
  });
  return new Promise((resolve) => server!.listen(port, '127.0.0.1', () => resolve((server!.address() as { port: number }).port)));
}

function close(): Promise<void> {
  const s = server;
  server = null;
  if (s === null) return Promise.resolve();
  s.closeAllConnections();
  return new Promise((resolve) => s.close(() => resolve()));
}

afterEach(async () => {
  await close();
  answer = null;
  asked = 0;
});

describe('ConsensusProbe', () => {
  it('reads the certificate, null and -32601; keeps the verdict when the node does not answer', async () => {
    const port = await listen();
    const probe = new ConsensusProbe(`http://127.0.0.1:${port}/?api-key=SECRET`, 2_000);
    answer = CERT;
    probe.tick(() => undefined);
    await until(() => probe.current().checkedAtMs !== null);
    expect(probe.current()).toMatchObject({ mode: 'alpenglow', source: 'certificate', sinceSlot: 459_652_999, error: null });
    answer = null;
    probe.lost();
    probe.tick(() => undefined);
    await until(() => probe.current().mode === 'tower');
    expect(probe.current()).toMatchObject({ source: 'null', sinceSlot: null });
    answer = 'missing';
    probe.lost();
    probe.tick(() => undefined);
    await until(() => probe.current().source === 'method_not_found');
    expect(probe.current().mode).toBe('tower');
    await close();
    probe.lost();
    probe.tick(() => undefined);
    await until(() => probe.current().error !== null);
    expect(probe.current()).toMatchObject({ mode: 'tower', source: 'method_not_found', error: 'ECONNREFUSED' });
    expect(JSON.stringify(probe.current())).not.toContain('SECRET');
  });
});

describe('HealthMonitor: consensus at start and after a reconnect', () => {
  it('asks once, again only after the upstream was unreachable, and shows it in the report', async () => {
    const port = await listen();
    answer = null;
    const config = configSchema.parse({ upstream: { rpcUrl: `http://127.0.0.1:${port}` }, health: { probeIntervalMs: 100, probeTimeoutMs: 1_000 } });
    const monitor = new HealthMonitor({
      config,
      availableRouteMask: 0,
      counters: () => new Float64Array(256),
      snapshot: null,
      localnet: null,
      onDeliverable: () => undefined,
      log: createLogger('silent', 'test'),
    });
    monitor.start();
    try {
      await until(() => monitor.current().consensus?.mode === 'tower', 5_000);
      await new Promise((r) => setTimeout(r, 500)); // five more ticks
      expect(asked).toBe(1);
      // The cluster behind the URL goes away and comes back migrated (a restarted localnet, a switched node).
      await close();
      await until(() => monitor.current().upstream.reachable === false, 5_000);
      answer = CERT;
      await listen(port);
      await until(() => monitor.current().consensus?.mode === 'alpenglow', 5_000);
      expect(monitor.current().consensus).toMatchObject({ source: 'certificate', sinceSlot: 459_652_999 });
      expect(monitor.consensusMode()).toBe('alpenglow');
      expect(asked).toBe(2);
    } finally {
      monitor.stop();
    }
  });
});
