// The localnet child's supervisor (src/localnet-child.ts) on a stand-in child that crashes right after becoming ready:
// every exit is logged with its code and restarted on the same port, and a crash loop ends in one give-up call
// (the relay then stops with exit code 1) instead of restarting forever.
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { RESTART_LIMIT, startLocalnetChild } from '../../../src/localnet-child.js';

const CRASHING = fileURLToPath(new URL('../../fixtures/localnet/crashing-localnet.mjs', import.meta.url));

describe('localnet supervisor', () => {
  it('logs every exit, restarts on the same port, and gives up once on a crash loop', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
    let gaveUp: string[] = [];
    const child = await startLocalnetChild(CRASHING, log, { onGiveUp: (r) => gaveUp.push(r), backoffMs: { first: 10, max: 40 } });
    const deadline = Date.now() + 20_000;
    while (child.state() !== 'failed' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(child.state()).toBe('failed');
    expect(gaveUp).toHaveLength(1);
    expect(gaveUp[0]).toMatch(/exits within 60 s/);
    const exits = lines.filter((l) => l.event === 'localnet_exited');
    expect(exits.length).toBe(RESTART_LIMIT + 1);
    for (const e of exits) expect(e).toMatchObject({ level: 50, code: 3 });
    const restarts = lines.filter((l) => l.event === 'localnet_restarted');
    expect(restarts.length).toBe(RESTART_LIMIT);
    for (const r of restarts) expect(r.rpcUrl).toBe('http://127.0.0.1:40000');
    expect(lines.filter((l) => l.event === 'localnet_gave_up')).toHaveLength(1);
    child.stop();
    gaveUp = [];
  });
});
