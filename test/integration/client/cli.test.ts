// `slotrelay send | leaders | fees` (the operator commands on the client library) as a user runs them: the built
// CLI (dist/src/cli.js) in a child process against a real relay on its embedded localnet, the key in SLOTRELAY_KEY.
// send: argument, stdin and --file (wire bytes) all land and print the JSON answer, exit 0; a refusal prints the
// relay's error as JSON with exit 1; bad usage exits 2. leaders: the table (and --json) of the next leader slots.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection, Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt } from '../../helpers/client-dist.js';
import { embeddedLocalnetUrl, fundedPayer } from '../../helpers/embedded-localnet.js';
import { startRelay, TEST_KEY, type RelayHandle } from '../../helpers/relay-process.js';
import { waitFor } from '../../helpers/wait-for.js';
import { signedTransfer } from '../../helpers/transactions.js';
import { landed } from '../../helpers/landed.js';

let relay: RelayHandle;
let localnet: Connection;
let payer: Keypair;

beforeAll(async () => {
  ensureClientBuilt();
  relay = await startRelay({}); // log level info: the localnet_started line names the embedded localnet
  localnet = new Connection(embeddedLocalnetUrl(relay), 'confirmed');
  payer = await fundedPayer(localnet);
}, 60_000);

afterAll(async () => {
  await relay?.stop();
});

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: string[], opts: { stdin?: Buffer | string; key?: string } = {}): Promise<Run> {
  const child = spawn(process.execPath, ['dist/src/cli.js', ...args], {
    env: { PATH: process.env.PATH, ...(opts.key === '' ? {} : { SLOTRELAY_KEY: opts.key ?? TEST_KEY }) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(opts.stdin ?? '');
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

const hosts = (): string[] => ['--relay', relay.relayUrl, '--rpc', relay.rpcUrl];

describe('slotrelay send', () => {
  it('a transaction as the argument, on stdin, and in a file (wire bytes): JSON answer, exit 0, landed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'slotrelay-send-'));
    const inFile = await signedTransfer(localnet, payer, 1_000_000, 'confirmed');
    writeFileSync(join(dir, 'tx.bin'), inFile.bytes);
    const runs = [
      await cli(['send', (await signedTransfer(localnet, payer, 1_000_000, 'confirmed')).base64, '--routes', 'rpc', ...hosts()]),
      await cli(['send', '-', '--max-retries', '0', ...hosts()], { stdin: (await signedTransfer(localnet, payer, 1_000_000, 'confirmed')).base64 + '\n' }),
      await cli(['send', '--file', join(dir, 'tx.bin'), '--routes', 'default', ...hosts()]),
    ];
    for (const r of runs) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const answer = JSON.parse(r.stdout) as { accepted: boolean; signature: string; routes: string[]; requestId: string };
      expect(answer).toMatchObject({ accepted: true, routes: ['rpc'], requestId: expect.any(String) });
      await landed(localnet, answer.signature);
    }
  });

  it("a refusal prints the relay's error as JSON and exits 1", async () => {
    const r = await cli(['send', (await signedTransfer(localnet, payer, 1_000_000, 'confirmed')).base64, ...hosts()], { key: 'deadbeef-dead-4bee-8eef-deadbeefdead' });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ accepted: false, status: 401, error: { code: -32600, reason: 'unauthorized' }, requestId: expect.any(String) });
    // This relay's QUIC ingress is off (startRelay's default): nothing answers there, the submit times out.
    const quic = await cli(['send', 'AAAA', '--transport', 'quic', '--quic', '127.0.0.1:9', '--timeout', '500', ...hosts()]);
    expect(quic.code).toBe(1);
    expect(JSON.parse(quic.stdout)).toMatchObject({ accepted: false, error: { reason: 'timeout', message: expect.stringMatching(/QUIC/) } });
  });

  it('bad usage exits 2 with a message: no key, unknown route, unknown flag, two transactions', async () => {
    const cases: [string[], { key?: string }, RegExp][] = [
      [['send', 'AAAA', ...hosts()], { key: '' }, /no API key/],
      [['send', 'AAAA', '--routes', 'rpc,pigeon', ...hosts()], {}, /unknown route "pigeon"/],
      [['send', 'AAAA', '--bogus', ...hosts()], {}, /bogus/],
      [['send', 'AAAA', 'BBBB', ...hosts()], {}, /one transaction/],
      [['leaders', '--limit', '0', ...hosts()], {}, /--limit must be a positive integer/],
    ];
    for (const [args, opts, message] of cases) {
      const r = await cli(args, opts);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
  });
});

describe('slotrelay leaders', () => {
  it('a table of the next leader slots with path and route scores; --json is the relay result', async () => {
    const json = await waitFor('leader slots', () => cli(['leaders', '--limit', '6', '--json', ...hosts()]), (r) => r.code === 0);
    const res = JSON.parse(json.stdout) as { total: number; data: { slot: number; identity: string }[] };
    expect(res.total).toBe(6);
    const table = await cli(['leaders', '--start', String(res.data[0].slot), '--limit', '6', ...hosts()]);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^slot\s+leader\s+stake \(SOL\)\s+location\s+first path\s+score ms by region \(\* lowest\)$/);
    expect(lines[1]).toMatch(/^-+( +-+)+$/);
    expect(lines).toHaveLength(2 + 6 + 1);
    res.data.forEach((row, i) => {
      expect(lines[2 + i]).toMatch(new RegExp(`^${row.slot}\\s+${row.identity.slice(0, 6)}\\.\\.${row.identity.slice(-6)}\\s`));
      expect(lines[2 + i]).toMatch(/local \d+(\.\d+)?\*$/);
    });
    expect(lines[8]).toMatch(/^snapshot slot \d+, \d+ ms old; 6 rows$/);
  });
});
