// A relay started without identity.keypairPath generates its QUIC identity in memory: no keypair file is written
// under the temp directory (the child's TMPDIR is a fresh directory the test watches), not while it runs, not after
// SIGTERM, not after SIGINT. Every egress worker presents the same generated identity (two workers, one static peer
// that records each transaction's sender identity), and the next start gets a fresh one.
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TpuListener } from '../../../src/localnet/tpu-listener.js';
import { startRelay, type RelayHandle } from '../../helpers/relay-process.js';
import { ensureDist } from './dist-build.js';
import { submitStatic } from '../../helpers/submit-static.js';
import { holdsWithin, until } from '../../helpers/wait-for.js';

const WORKERS = 2;
let peer: TpuListener;
let childTmp: string;
const senderOf = new Map<string, string | null>();

/** Every file under `dir` (recursively), with its mode. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    let st;
    try {
      st = statSync(p);
    } catch {
      continue; // removed between readdir and stat (a private addon copy: mapped, then unlinked)
    }
    if (st.isDirectory()) out.push(...filesUnder(p));
    else out.push(`${p} (mode ${(st.mode & 0o777).toString(8)})`);
  }
  return out;
}

async function start(): Promise<{ relay: RelayHandle; identity: string }> {
  const relay = await startRelay(
    {
      upstream: { rpcUrl: 'http://127.0.0.1:9' }, // not used: /v1/submit has no preflight, maxRetries 0 polls nothing
      rings: { workers: WORKERS, slotsPerRing: 256 },
      routes: { static: { peers: [`127.0.0.1:${peer.address().port}`] } },
    },
    { TMPDIR: childTmp },
  );
  // Pino's lines and the ready line reach the pipe by different writes: wait for the identity line.
  const identityLine = () => relay.logs.find((l) => l.includes('"event":"relay_identity"'));
  if (!(await holdsWithin(() => identityLine() !== undefined, 5_000))) {
    await relay.stop('SIGKILL');
    throw new Error(`no relay_identity line:\n${relay.logs.join('\n')}`);
  }
  return { relay, identity: (JSON.parse(identityLine()!) as { identity: string }).identity };
}

beforeAll(async () => {
  ensureDist();
  childTmp = mkdtempSync(join(tmpdir(), 'slotrelay-child-tmp-'));
  peer = new TpuListener({
    host: '127.0.0.1',
    port: 0,
    validatorIdentity: 'peer',
    onTransaction: (tx, info) => void senderOf.set(Buffer.from(tx).toString('base64'), info.senderIdentity),
  });
  await peer.start();
}, 60_000);

afterAll(async () => {
  await peer?.stop();
});

describe('generated identity (no identity.keypairPath)', () => {
  it('stays in memory: no key file under the temp directory while running or after SIGTERM / SIGINT; one identity per run', async () => {
    const first = await start();
    try {
      expect(filesUnder(childTmp)).toEqual([]);
      expect(first.relay.logs.some((l) => l.includes('"event":"identity_generated"') && !l.includes('"keypairPath"'))).toBe(true);
      const sent = await submitStatic(first.relay.relayUrl, 20, 41_000);
      await until(() => sent.every((b) => senderOf.has(b)), 10_000);
      // The QUIC thread presents the one identity main generated, on one connection whatever rings.workers is.
      expect(new Set(sent.map((b) => senderOf.get(b)))).toEqual(new Set([first.identity]));
      await until(() => peer.counters.activeConnections === 1, 5_000);
      expect(filesUnder(childTmp)).toEqual([]);
    } finally {
      expect(await first.relay.stop('SIGTERM')).toBe(0);
    }
    expect(filesUnder(childTmp)).toEqual([]);

    const second = await start();
    try {
      expect(second.identity).not.toBe(first.identity);
      const sent = await submitStatic(second.relay.relayUrl, 5, 42_000);
      await until(() => sent.every((b) => senderOf.has(b)), 10_000);
      expect(new Set(sent.map((b) => senderOf.get(b)))).toEqual(new Set([second.identity]));
      expect(filesUnder(childTmp)).toEqual([]);
    } finally {
      expect(await second.relay.stop('SIGINT')).toBe(0);
    }
    expect(filesUnder(childTmp)).toEqual([]);
  }, 90_000);
});
