// A relay that cannot open one of its listeners (issue 47, items 2 and 10). Before: "cannot listen on ... for the
// relay host" was printed, the localnet stopped, and the process stayed up serving nothing (a supervisor saw it alive);
// the status page's failure was only logged. Shown on real processes: with a port held by a plain node:net server (no
// SO_REUSEPORT), by a UDP socket, by another relay, or on an address not on this host, `slotrelay start` exits 1 (the
// documented start failure) within seconds, names the port, the listener and its config field, the holder's pid
// where /proc says it, prints no stack, never reports ready, and leaves no embedded localnet behind. The first relay
// keeps serving and its banner says its admin port is its alone. Needs the build (dist/). ~20-40 s.
import { spawn } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freePort } from '../../helpers/free-port.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { until } from '../../helpers/wait-for.js';
import { ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';

interface Run {
  /** Exit code, or 'still running' when it had not exited by the deadline (then SIGKILLed). */
  readonly code: number | null | 'still running';
  readonly stdout: string;
  readonly stderr: string;
}

const BASE = {
  rpcHost: { host: '127.0.0.1', port: 0 },
  relayHost: { host: '127.0.0.1', port: 0, quicPort: 0 },
  admin: { port: 0 },
  upstream: { rpcUrl: 'http://127.0.0.1:9' },
  telemetry: { enabled: false },
  rings: { workers: 1, slotsPerRing: 1024 },
  keys: [{ key: TEST_KEY, name: 'test-bot' }],
};

/** `slotrelay start` with the config given, until it exits or deadlineMs pass. */
function runStart(config: Record<string, unknown>, deadlineMs = 30_000): Promise<Run> {
  const file = join(mkdtempSync(join(tmpdir(), 'slotrelay-listen-')), 'config.yaml');
  writeFileSync(file, stringify(config));
  const child = spawn(process.execPath, ['dist/src/cli.js', 'start', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      child.once('close', () => resolve({ code: 'still running', stdout, stderr }));
    }, deadlineMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A plain node:net listener on 127.0.0.1 (no SO_REUSEPORT), as any other program holding the port. */
async function holdTcp(): Promise<{ port: number; server: Server }> {
  const server = createServer((s) => s.destroy());
  await new Promise<void>((res) => server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => res()));
  return { port: (server.address() as { port: number }).port, server };
}

async function holdUdp(): Promise<{ port: number; socket: UdpSocket }> {
  const socket = createSocket('udp4');
  await new Promise<void>((res) => socket.bind({ address: '127.0.0.1', port: 0, exclusive: true }, () => res()));
  return { port: socket.address().port, socket };
}

function expectStartFailure(r: Run, port: number, field: string): void {
  expect(r.code, `stderr:\n${r.stderr}`).toBe(1);
  expect(r.stderr).toContain(`127.0.0.1:${port}`);
  expect(r.stderr).toContain(field);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(r.stdout).not.toContain('relay_ready');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('a listener that cannot be opened at start: exit 1, the port, the listener and the holder named', () => {
  const held: Server[] = [];
  beforeAll(() => ensureDistFresh());
  afterAll(() => held.forEach((s) => s.close()));

  const cases: [string, string, (port: number) => Record<string, unknown>][] = [
    ['the relay host', 'relayHost.port', (port) => ({ relayHost: { host: '127.0.0.1', port, quicPort: 0 } })],
    ['the JSON-RPC host', 'rpcHost.port', (port) => ({ rpcHost: { host: '127.0.0.1', port }, jsonRpc: { pubsub: { port: 0 } } })],
    ['PubSub', 'jsonRpc.pubsub.port', (port) => ({ jsonRpc: { pubsub: { port } } })],
    ['the status page (admin listener)', 'admin.port', (port) => ({ admin: { port } })],
  ];
  for (const [what, field, set] of cases) {
    it(`${what}'s port held by another program (${field})`, async () => {
      const { port, server } = await holdTcp();
      held.push(server);
      const started = Date.now();
      const r = await runStart({ ...BASE, ...set(port) });
      expectStartFailure(r, port, field);
      expect(r.stderr).toContain(`for ${what}`);
      expect(r.stderr).toContain(`held by pid ${process.pid} (`);
      expect(Date.now() - started).toBeLessThan(15_000);
      if (field === 'admin.port') expect(r.stderr).toContain('several relays on one host need one admin.port each');
    }, 40_000);
  }

  it('the QUIC ingress port (UDP) held: exit 1, named, and the embedded localnet it had started is gone', async () => {
    const { port, socket } = await holdUdp();
    try {
      // No upstream: the relay starts its embedded localnet first, then fails on the QUIC ingress.
      const { upstream: _none, ...noUpstream } = BASE;
      const r = await runStart({ ...noUpstream, relayHost: { host: '127.0.0.1', port: 0, quicPort: port } }, 60_000);
      expectStartFailure(r, port, 'relayHost.quicPort');
      expect(r.stderr).toContain('for the QUIC ingress');
      expect(r.stderr).toContain(`held by pid ${process.pid} (`);
      const started = /"event":"localnet_started".*?"pid":(\d+)/.exec(r.stdout);
      expect(started, r.stdout).not.toBeNull();
      expect(alive(Number(started![1]))).toBe(false);
    } finally {
      socket.close();
    }
  }, 70_000);

  it('an address not on this host: the bind fails, exit 1, named, no holder claimed', async () => {
    const port = await freePort();
    // 192.0.2.1 (TEST-NET-1, RFC 5737) is on no interface here: the connect probe finds nothing, the bind is refused.
    const r = await runStart({ ...BASE, relayHost: { host: '192.0.2.1', port, quicPort: 0 } });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`192.0.2.1:${port}`);
    expect(r.stderr).toContain('relayHost.port');
    expect(r.stderr).toContain('the bind failed');
    expect(r.stderr).toContain(`no TCP socket on this host holds port ${port}`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  }, 40_000);
});

describe('several relays on one host', () => {
  let first: RelayHandle;
  let adminPort = 0;
  let relayPort = 0;
  beforeAll(async () => {
    ensureDistFresh();
    adminPort = await freePort();
    first = await startRelay({ admin: { port: adminPort }, upstream: { rpcUrl: 'http://127.0.0.1:9' }, telemetry: { enabled: false } });
    relayPort = Number(new URL(first.relayUrl).port);
  }, 40_000);
  afterAll(async () => {
    await first?.stop();
  });

  it("the first relay's banner says its admin port is its alone", async () => {
    await until(() => first.logs.some((l) => l.startsWith('config: ')), 5_000); // the banner follows the ready line
    expect(first.logs.some((l) => l.includes(`admin.port ${adminPort} is this relay's alone`))).toBe(true);
  });

  it("a second relay on the first one's status page port refuses to start, naming admin.port and the first relay's pid", async () => {
    const r = await runStart({ ...BASE, admin: { port: adminPort } });
    expectStartFailure(r, adminPort, 'admin.port');
    expect(r.stderr).toContain(`held by pid ${first.child.pid} (`);
    expect(r.stderr).toContain('several relays on one host need one admin.port each');
    // The first relay is untouched: its status page and its relay host still answer.
    expect((await fetch(`http://127.0.0.1:${adminPort}/status.json`)).status).toBe(200);
    expect((await fetch(`${first.relayUrl}/health`)).status).toBeLessThan(600);
  }, 40_000);

  it("a second relay on the first one's relay port (a uWS listener) refuses to start instead of sharing it", async () => {
    const r = await runStart({ ...BASE, relayHost: { host: '127.0.0.1', port: relayPort, quicPort: 0 } });
    expectStartFailure(r, relayPort, 'relayHost.port');
    expect(r.stderr).toContain(`held by pid ${first.child.pid} (`);
  }, 40_000);
});
