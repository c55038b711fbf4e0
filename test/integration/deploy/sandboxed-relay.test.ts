// The relay in a stand-in for the unit's sandbox (deploy/systemd/slotrelay.service), without systemd:
// scripts/ci/sandbox-exec.sh (a private mount namespace with every mount read-only but the state directory and /tmp,
// an unprivileged user, no new privileges: ProtectSystem=strict, StateDirectory=, PrivateTmp=, User=) around
// scripts/ci/syscall-filter-exec.py (SystemCallFilter=@system-service ~@privileged, SystemCallErrorNumber=EPERM,
// RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX, via libseccomp with the sets systemd-analyze expands). In it the
// relay starts, writes its identity keypair into the state directory (and nowhere else: it could not), loads uWS and
// the quiche copy, sends a transaction to the localnet's leaders over QUIC (direct route) that lands, and drains and
// exits 0 on SIGTERM. The sandbox is shown to bite: setuid refused with EPERM, a netlink socket with EAFNOSUPPORT, a
// write outside the state directory with EROFS. Not covered: PrivateUsers, ProtectProc, ProtectHome, the kernel and
// namespace restrictions (systemd as PID 1 only; docs/deployment.md says so). Needs the build (dist/), root for
// unshare, and python3-seccomp (scripts/ci/ensure-syscall-filter.sh). ~20-35 s.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Connection } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { fundedPayer } from '../../helpers/embedded-localnet.js';
import { TEST_KEY } from '../../helpers/relay-process.js';
import { legacyTransfer } from '../../helpers/transactions.js';
import { waitFor } from '../../helpers/wait-for.js';

const FILTER = 'scripts/ci/syscall-filter-exec.py';
const SANDBOX = 'scripts/ci/sandbox-exec.sh';
/** The service's user stand-in: nobody. */
const UID = 65534;
const ensure = spawnSync('bash', ['scripts/ci/ensure-syscall-filter.sh'], { encoding: 'utf8' });
const python = ensure.status === 0 ? ensure.stdout.trim().split('\n').pop()! : '';
const probe = spawnSync('bash', [SANDBOX, '--probe'], { encoding: 'utf8' });
/**
 * The sandbox runs node as nobody: every directory up to the node binary must let others through, and the binary run.
 * The Node 24 run of CI (scripts/ci/install-node.sh) has node under root's home, which nobody cannot enter: the test
 * runs on the machine's own Node then, and says why it is skipped on the other.
 */
function nodeUnreachableByOthers(path: string): string {
  for (let p = path; p !== dirname(p); p = dirname(p)) {
    // x for others: to run the file, and to pass through each directory above it.
    if ((statSync(p).mode & 0o001) === 0) return `${p} is not reachable by user nobody (node at ${path})`;
  }
  return '';
}
const unreachable = nodeUnreachableByOthers(realpathSync(process.execPath));
const why =
  ensure.status !== 0
    ? `no seccomp filter tool: ${ensure.stderr.trim()}`
    : probe.status !== 0
      ? `no mount namespace here (unshare needs root): ${probe.stdout.trim()}`
      : unreachable;
if (why !== '') console.warn(`skipping the sandboxed relay test: ${why}`);

// Not under /tmp, which stays writable in the sandbox: here only the state directory may be written.
const dir = mkdtempSync(join('/var/tmp', 'slotrelay-sandboxed-'));
const state = join(dir, 'state');
let localnet: Localnet;
let relay: ChildProcess;
const logs: string[] = [];
let rpcUrl = '';

beforeAll(async () => {
  if (why !== '') return;
  localnet = await startLocalnet({ validators: 2, slotMs: 200 });
  chmodSync(dir, 0o755);
  mkdirSync(state, { mode: 0o700 });
  chownSync(state, UID, UID);
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    stringify({
      rpcHost: { host: '127.0.0.1', port: 0 },
      relayHost: { host: '127.0.0.1', port: 0, quicPort: 0 },
      upstream: { rpcUrl: localnet.rpcUrl },
      routes: { defaultRoutes: ['direct'], direct: { enabled: true }, rpc: { endpoints: [localnet.rpcUrl] } },
      identity: { keypairPath: join(state, 'identity.json') },
      rings: { workers: 1, slotsPerRing: 1024 },
      keys: [{ key: TEST_KEY, name: 'sandboxed', defaultRoutes: ['direct'], preflight: 'skip' }],
    }),
  );
  chmodSync(file, 0o644);
  relay = spawn('bash', [SANDBOX, String(UID), String(UID), state, python, FILTER, process.execPath, 'dist/src/cli.js', 'start', '--config', file], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH },
  });
  createInterface({ input: relay.stderr! }).on('line', (l) => logs.push(l));
  rpcUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`relay did not start under the filter:\n${logs.join('\n')}`)), 45_000);
    relay.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`relay exited with ${String(code)} under the filter:\n${logs.join('\n')}`));
    });
    createInterface({ input: relay.stdout! }).on('line', (l) => {
      logs.push(l);
      if (!l.includes('"relay_ready"')) return;
      const ready = JSON.parse(l) as { listeners: { name: string; host: string; port: number }[] };
      const rpc = ready.listeners.find((x) => x.name === 'rpc')!;
      clearTimeout(timer);
      resolve(`http://${rpc.host}:${rpc.port}`);
    });
  });
}, 60_000);

afterAll(async () => {
  if (relay !== undefined && relay.exitCode === null) relay.kill('SIGKILL');
  await localnet?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(why !== '')('the relay in the unit\'s sandbox (stand-in without systemd)', () => {
  it('the sandbox refuses what it should: setuid (EPERM), a netlink socket (EAFNOSUPPORT), writes outside the state directory (EROFS)', () => {
    const r = spawnSync(python, [FILTER, process.execPath, '-e', 'try { process.setuid(0); console.log("allowed") } catch (e) { console.log(e.code) }'], { encoding: 'utf8' });
    expect(r.stderr).toMatch(/syscall-filter: \d+ calls allowed/);
    expect(r.stdout.trim()).toBe('EPERM');
    // RestrictAddressFamilies: a netlink socket is refused (97 = EAFNOSUPPORT), an inet one is not.
    const af = spawnSync(python, [FILTER, python, '-c', 'import socket\nfor f in (socket.AF_INET, socket.AF_NETLINK):\n  try: socket.socket(f, socket.SOCK_DGRAM).close(); print("ok")\n  except OSError as e: print(e.errno)'], { encoding: 'utf8' });
    expect(af.stdout.trim().split('\n')).toEqual(['ok', '97']);
    const script = `const fs = require('fs'); for (const p of [${JSON.stringify(join(dir, 'x'))}, ${JSON.stringify(join(state, 'x'))}]) { try { fs.writeFileSync(p, ''); console.log('written'); } catch (e) { console.log(e.code); } }`;
    const w = spawnSync('bash', [SANDBOX, String(UID), String(UID), state, process.execPath, '-e', script], { encoding: 'utf8' });
    expect(w.stdout.trim().split('\n')).toEqual(['EROFS', 'written']);
  });

  it('serves: writes its identity, sends a transaction direct over QUIC that lands, drains and exits 0', async () => {
    expect(logs.join('\n')).toMatch(/syscall-filter: \d+ calls allowed/);
    expect(existsSync(join(state, 'identity.json'))).toBe(true);
    const conn = new Connection(localnet.rpcUrl, 'confirmed');
    const payer = await fundedPayer(conn);
    // 2,000,000 lamports: above the rent-exempt minimum of the new recipient account.
    const tx = legacyTransfer(2_000_000, payer, (await conn.getLatestBlockhash('confirmed')).blockhash);
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx.base64, { encoding: 'base64', skipPreflight: true }] }),
    });
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 1, result: tx.signature });
    const status = await waitFor(
      'the transaction confirmed',
      async () => (await conn.getSignatureStatuses([tx.signature])).value[0],
      (s) => s !== null && (s.confirmationStatus === 'confirmed' || s.confirmationStatus === 'finalized'),
      30_000,
      100,
    );
    expect(status?.err).toBeNull();
    const exited = new Promise<number | null>((r) => relay.once('close', (code) => r(code)));
    relay.kill('SIGTERM');
    const code = await exited;
    const stopped = logs.find((l) => l.includes('"relay_stopped"'));
    expect(code, logs.slice(-20).join('\n')).toBe(0);
    console.log(`relay_stopped in the sandbox: ${stopped ?? "(none)"}`);
    expect(stopped).toMatch(/"direct":\{[^}]*"sent":[1-9]/);
  }, 60_000);
});
