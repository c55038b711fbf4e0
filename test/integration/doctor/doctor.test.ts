// `slotrelay doctor --json` as a process on this machine, against the embedded localnet as a live upstream: every
// check seen passing (a good fake host tree, a staked identity, free ports) and failing (a bad fake host tree, a dead
// upstream, ports held by the test, no uWS build allowed), plus its skips and warnings, and one run on the real host.
// Host facts come from SLOTRELAY_DOCTOR_ROOT (a temp tree standing for /proc and /sys) and fake chronyc / timedatectl
// first on PATH; a stub upstream that answers but is stuck. Needs the build (dist/). ~15-30 s.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freePort } from '../../helpers/free-port.js';

interface Finding {
  check: string;
  status: 'pass' | 'warn' | 'fail' | 'skip';
  detail: string;
  fix?: string;
  data?: Record<string, unknown>;
}
interface Report {
  config: string | null;
  ok: boolean;
  counts: Record<string, number>;
  findings: Finding[];
}

const CHECKS = ['udp-buffers', 'open-files', 'clock-sync', 'cpu-governor', 'upstream-rpc', 'upstream-ws', 'leader-schedule', 'consensus', 'identity-stake', 'ports', 'uws-build'];
const AGAVE = 134217728;

const dir = mkdtempSync(join(tmpdir(), 'slotrelay-doctor-'));
let localnet: ChildProcess;
let rpcUrl = '';
let stakedIdentity = '';

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A /proc + /sys tree: UDP buffers, the open-file limit and per-CPU governors as given (undefined = absent). */
function fakeRoot(name: string, o: { udp?: number; nofile?: number; governors?: string[] }): string {
  const root = join(dir, name);
  mkdirSync(root, { recursive: true });
  if (o.udp !== undefined) for (const k of ['rmem_max', 'rmem_default', 'wmem_max', 'wmem_default']) write(join(root, 'proc/sys/net/core', k), `${o.udp}\n`);
  if (o.nofile !== undefined) {
    write(join(root, 'proc/self/limits'), `Limit                     Soft Limit           Hard Limit           Units     \nMax open files            ${o.nofile}                ${o.nofile}                files     \n`);
  }
  (o.governors ?? []).forEach((g, i) => write(join(root, `sys/devices/system/cpu/cpu${i}/cpufreq/scaling_governor`), `${g}\n`));
  return root;
}

/** A directory of fake tools for PATH: name -> shell script body. */
function fakeBin(name: string, tools: Record<string, string>): string {
  const bin = join(dir, name);
  mkdirSync(bin, { recursive: true });
  for (const [tool, body] of Object.entries(tools)) {
    write(join(bin, tool), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, tool), 0o755);
  }
  return bin;
}

// printf is a shell builtin: PATH holds only the fake tools.
const chronyTracking = (leap: string, offset: string): string =>
  [
    'Reference ID    : C0A80001 (192.168.0.1)',
    'Stratum         : 3',
    `System time     : ${offset} seconds fast of NTP time`,
    'Last offset     : -0.000000894 seconds',
    `Leap status     : ${leap}`,
  ]
    .map((l) => `printf '%s\\n' '${l}'`)
    .join('\n');

/** Runs the doctor with a config (written as YAML) and the environment given; resolves its report and exit code. */
function doctor(name: string, config: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<{ code: number; report: Report; ms: number }> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, stringify(config));
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['dist/src/cli.js', 'doctor', '--config', file, '--json'], { env, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      try {
        resolve({ code, report: JSON.parse(stdout) as Report, ms: Date.now() - t0 });
      } catch {
        reject(new Error(`doctor printed no JSON (exit ${code}):\n${stdout}\n${stderr}`));
      }
    });
  });
}

const byCheck = (r: Report): Map<string, Finding[]> => {
  const m = new Map<string, Finding[]>();
  for (const f of r.findings) m.set(f.check, [...(m.get(f.check) ?? []), f]);
  return m;
};
const statusOf = (r: Report, check: string): string[] => (byCheck(r).get(check) ?? []).map((f) => f.status);

beforeAll(async () => {
  localnet = spawn(process.execPath, ['dist/src/cli.js', 'localnet', '--rpc-port', '0', '--slot-ms', '100', '--validators', '2'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const first = await createInterface({ input: localnet.stdout! })[Symbol.asyncIterator]().next();
  const ready = JSON.parse(first.value as string) as { rpcUrl: string; validators: { identity: string }[] };
  rpcUrl = ready.rpcUrl;
  // The localnet's validators derive from its seed (src/localnet/validators.ts): validator 0 is staked.
  const kp = Keypair.fromSeed(createHash('sha256').update('slotrelay-localnet/slotrelay/identity/0').digest());
  expect(kp.publicKey.toBase58()).toBe(ready.validators[0]!.identity);
  stakedIdentity = join(dir, 'staked-identity.json');
  writeFileSync(stakedIdentity, JSON.stringify(Array.from(kp.secretKey)));
});

afterAll(async () => {
  if (localnet !== undefined && localnet.exitCode === null) {
    localnet.kill('SIGTERM');
    await once(localnet, 'exit');
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('slotrelay doctor', () => {
  it('passes every check on a good host with a live, fresh upstream, a staked identity and free ports (exit 0)', async () => {
    const [rpcPort, pubsubPort, relayPort, quicPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const { code, report, ms } = await doctor(
      'good',
      {
        rpcHost: { host: '127.0.0.1', port: rpcPort },
        relayHost: { host: '127.0.0.1', port: relayPort, quicPort },
        jsonRpc: { pubsub: { port: pubsubPort } },
        admin: { port: await freePort() }, // the status page's default 8890 may be another relay's on this host
        upstream: { rpcUrl },
        routes: { direct: { enabled: true } },
        identity: { keypairPath: stakedIdentity },
      },
      {
        PATH: fakeBin('bin-good', { chronyc: chronyTracking('Normal', '0.000012345') }),
        SLOTRELAY_DOCTOR_ROOT: fakeRoot('root-good', { udp: AGAVE, nofile: 65536, governors: ['performance', 'performance'] }),
      },
    );
    console.log(`doctor, good host: ${ms} ms\n${report.findings.map((f) => `  ${f.status} ${f.check}: ${f.detail}`).join('\n')}`);
    expect(report.findings.map((f) => f.check)).toEqual(expect.arrayContaining(CHECKS));
    // The localnet runs Alpenglow from genesis: getAgGenesisCert's certificate names slot 0.
    expect(byCheck(report).get('consensus')![0]).toMatchObject({ status: 'pass', data: { consensus: 'alpenglow', source: 'certificate', sinceSlot: 0 } });
    // No upstream.grpc here: its check says so and is skipped; every other check passes.
    expect(statusOf(report, 'upstream-grpc')).toEqual(['skip']);
    for (const f of report.findings.filter((x) => x.check !== 'upstream-grpc')) expect({ check: f.check, status: f.status, detail: f.detail }).toMatchObject({ status: 'pass' });
    expect(report.ok).toBe(true);
    expect(code).toBe(0);
    const ids = byCheck(report);
    expect(ids.get('identity-stake')![0]!.detail).toMatch(/is staked: \d+ SOL/);
    expect(ids.get('clock-sync')![0]!.data).toMatchObject({ source: 'chronyc', leap: 'Normal' });
    expect(ids.get('ports')![0]!.detail).toContain(`relayHost.quicPort UDP 127.0.0.1:${quicPort}`);
  });

  it('fails every check on a bad host with a dead upstream, taken ports and no loadable uWS build (exit 1)', async () => {
    const deadPort = await freePort(); // nothing listens there: connection refused
    const tcp: Server = createServer();
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
    const takenTcp = (tcp.address() as { port: number }).port;
    const udp: UdpSocket = createSocket('udp4');
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
    const takenUdp = udp.address().port;
    try {
      const { code, report, ms } = await doctor(
        'bad',
        {
          rpcHost: { host: '127.0.0.1', port: takenTcp },
          relayHost: { host: '127.0.0.1', port: await freePort(), quicPort: takenUdp },
          jsonRpc: { pubsub: { port: await freePort() } },
          upstream: { rpcUrl: `http://127.0.0.1:${deadPort}` },
          routes: { direct: { enabled: true } },
          identity: { keypairPath: stakedIdentity },
        },
        {
          PATH: fakeBin('bin-bad', { chronyc: chronyTracking('Not synchronised', '0.000000000') }),
          SLOTRELAY_DOCTOR_ROOT: fakeRoot('root-bad', { udp: 212992, nofile: 1024, governors: ['powersave', 'performance'] }),
          SLOTRELAY_UWS_BUILD: 'no-such-build',
        },
      );
      console.log(`doctor, bad host: ${ms} ms\n${report.findings.map((f) => `  ${f.status} ${f.check}: ${f.detail}\n     fix: ${f.fix}`).join('\n')}`);
      expect(report.findings.map((f) => f.check)).toEqual(expect.arrayContaining(CHECKS));
      expect(statusOf(report, 'upstream-grpc')).toEqual(['skip']); // no upstream.grpc configured (doctor-grpc.test.ts has it)
      for (const f of report.findings.filter((x) => x.check !== 'upstream-grpc')) {
        expect({ check: f.check, status: f.status }).toEqual({ check: f.check, status: 'fail' });
        expect(f.fix, f.check).toMatch(/\S/);
      }
      expect(report.ok).toBe(false);
      expect(code).toBe(1);
      const ids = byCheck(report);
      expect(ids.get('udp-buffers')![0]!.detail).toContain('net.core.rmem_max = 212992');
      expect(ids.get('open-files')![0]!.data).toMatchObject({ hard: 1024 });
      expect(ids.get('cpu-governor')![0]!.detail).toContain('1 CPU on "powersave"');
      expect(ids.get('clock-sync')![0]!.detail).toContain('Not synchronised');
      expect(ids.get('upstream-rpc')![0]!.detail).toContain('connection refused');
      expect(ids.get('ports')![0]!.detail).toContain(`rpcHost.port TCP 127.0.0.1:${takenTcp}: in use`);
      expect(ids.get('ports')![0]!.detail).toContain(`relayHost.quicPort UDP 127.0.0.1:${takenUdp}: in use`);
      expect(ids.get('uws-build')![0]!.detail).toContain('SLOTRELAY_UWS_BUILD=no-such-build');
    } finally {
      tcp.close();
      udp.close();
    }
  });

  it('fails an upstream that answers but is stuck: a slot that does not move, no leader schedule, no PubSub', async () => {
    // getHealth says ok, the slot stays at 100, getLeaderSchedule knows nothing, nobody is staked; no WebSocket.
    const answers: Record<string, unknown> = {
      getHealth: 'ok',
      getSlot: 100,
      getEpochInfo: { absoluteSlot: 100, epoch: 0, slotIndex: 100, slotsInEpoch: 432_000 },
      getLeaderSchedule: null,
      getVoteAccounts: { current: [], delinquent: [] },
    };
    const stuck = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const { id, method } = JSON.parse(body) as { id: number; method: string };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(method in answers ? { jsonrpc: '2.0', id, result: answers[method] } : { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } }));
      });
    });
    await new Promise<void>((r) => stuck.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(stuck.address() as { port: number }).port}`;
      const { code, report } = await doctor(
        'stuck',
        { rpcHost: { port: 0 }, relayHost: { port: 0, quicPort: 0 }, upstream: { rpcUrl: url }, routes: { direct: { enabled: true } }, identity: { keypairPath: stakedIdentity } },
        { PATH: fakeBin('bin-stuck', { chronyc: chronyTracking('Normal', '0.000001') }), SLOTRELAY_DOCTOR_ROOT: fakeRoot('root-stuck', { udp: AGAVE, nofile: 65536 }) },
      );
      const ids = byCheck(report);
      expect(ids.get('upstream-rpc')![0]).toMatchObject({ status: 'fail' });
      expect(ids.get('upstream-rpc')![0]!.detail).toContain('the processed slot stayed at 100');
      expect(statusOf(report, 'upstream-ws')).toEqual(['fail']);
      expect(ids.get('leader-schedule')![0]).toMatchObject({ status: 'fail' });
      expect(ids.get('leader-schedule')![0]!.detail).toContain('names no leader for the current slot 100');
      expect(ids.get('identity-stake')![0]).toMatchObject({ status: 'warn' });
      // A node without getAgGenesisCert (-32601: older than Agave 4.3) is read as Tower, with a warning.
      expect(ids.get('consensus')![0]).toMatchObject({ status: 'warn', data: { consensus: 'tower', source: 'method_not_found' } });
      expect(code).toBe(1);
    } finally {
      stuck.close();
    }
  });

  it('skips what cannot apply here and warns on an unstaked identity, without failing (exit 0)', async () => {
    const unstaked = join(dir, 'unstaked-identity.json');
    writeFileSync(unstaked, JSON.stringify(Array.from(Keypair.generate().secretKey)));
    const { code, report } = await doctor(
      'skips',
      { rpcHost: { port: 0 }, relayHost: { port: 0, quicPort: 0 }, admin: { port: 0 }, upstream: { rpcUrl }, routes: { direct: { enabled: true } }, identity: { keypairPath: unstaked } },
      {
        // No chronyc; a timedatectl that cannot reach systemd (a container): the clock is compared with the upstream's Date.
        PATH: fakeBin('bin-container', { timedatectl: 'echo "System has not been booted with systemd as init system (PID 1). Can\'t operate." >&2; exit 1' }),
        SLOTRELAY_DOCTOR_ROOT: fakeRoot('root-vm', { nofile: 65536 }), // no /proc/sys/net/core, no cpufreq
      },
    );
    expect(statusOf(report, 'udp-buffers')).toEqual(['skip']);
    expect(statusOf(report, 'cpu-governor')).toEqual(['skip']);
    expect(byCheck(report).get('cpu-governor')![0]!.detail).toMatch(/no cpufreq/);
    expect(statusOf(report, 'ports')).toEqual(['skip']);
    expect(statusOf(report, 'identity-stake')).toEqual(['warn']);
    expect(byCheck(report).get('identity-stake')![0]!.detail).toMatch(/has no activated stake/);
    expect(byCheck(report).get('clock-sync')![0]).toMatchObject({ status: 'pass', data: { source: 'upstream Date header' } });
    expect(report.ok).toBe(true);
    expect(code).toBe(0);
  });

  it('runs on this machine as it is (no fake tree): every check reported, each with a known status', async () => {
    const { code, report, ms } = await doctor('real', { rpcHost: { port: 0 }, relayHost: { port: 0, quicPort: 0 }, upstream: { rpcUrl }, routes: { direct: { enabled: true } } }, { PATH: process.env.PATH });
    console.log(`doctor, this machine: ${ms} ms, exit ${code}\n${report.findings.map((f) => `  ${f.status} ${f.check}: ${f.detail}`).join('\n')}`);
    expect(report.findings.map((f) => f.check)).toEqual(expect.arrayContaining(CHECKS));
    for (const f of report.findings) {
      expect(['pass', 'warn', 'fail', 'skip']).toContain(f.status);
      if (f.status === 'fail' || f.status === 'warn') expect(f.fix, f.check).toMatch(/\S/);
    }
    expect(code).toBe(report.findings.some((f) => f.status === 'fail') ? 1 : 0);
    // The live localnet upstream is reachable and fresh from here whatever the host's tuning.
    expect(statusOf(report, 'upstream-rpc')).toEqual(['pass']);
    expect(statusOf(report, 'upstream-ws')).toEqual(['pass']);
    expect(statusOf(report, 'leader-schedule')).toEqual(['pass']);
  });
});
