// The front's two readers of the telemetry snapshot (src/main.ts, src/front/method-table.ts): getLeaderSlots reads the
// full snapshot (it serves the rows); sendTransaction's minContextSlot check and getRecentPrioritizationFees read a
// leaders-only copy, so a new generation (every slot) costs them no copy of the rows (~400 KB at mainnet size,
// issue #28). Driven through the method table as the front dispatches a body.
import type { HttpResponse } from 'uWebSockets.js';
import { describe, expect, it } from 'vitest';
import type { CallContext } from '../../../src/admission/call-context.js';
import { Intake } from '../../../src/admission/intake.js';
import { KeyTable } from '../../../src/admission/key-table.js';
import { configSchema } from '../../../src/config/schema.js';
import { rpcHostMethods } from '../../../src/front/method-table.js';
import { RequestState } from '../../../src/http/response.js';
import { dispatchJsonRpc } from '../../../src/jsonrpc/dispatch.js';
import { parseJsonRpcBody } from '../../../src/jsonrpc/envelope.js';
import { createRing, RingProducer } from '../../../src/shm/ring.js';
import { SNAPSHOT_SCHEMA_VERSION, createSnapshotBuffer } from '../../../src/telemetry/snapshot-layout.js';
import { SnapshotReader, SnapshotWriter } from '../../../src/telemetry/snapshot.js';
import { legacyTransfer } from '../../helpers/transactions.js';

const KEY = '6f1c2a4e-9b7d-4c3a-8e21-5d0f4b6a7c19';
const ROWS = 200;
const ROW_BYTES = 500;

describe("the front's snapshot readers", () => {
  it('sendTransaction (minContextSlot) reads the slot without copying the rows; getLeaderSlots reads them', async () => {
    const config = configSchema.parse({ keys: [{ key: KEY, name: 't', rateLimit: { perSecond: 1_000, burst: 1_000 } }] });
    const keys = new KeyTable(config.keys, config.routes.defaultRoutes, 0);
    const intake = new Intake([new RingProducer(createRing(64, config.transactions.maxTransactionBytes))], config.transactions.maxTransactionBytes);
    const sab = createSnapshotBuffer(1 << 20);
    const rows = Array.from({ length: ROWS }, (_, i) => `{"slot":${900 + i},"pad":"${'x'.repeat(ROW_BYTES - 30)}"}`);
    new SnapshotWriter(sab).publish({
      schemaVersion: SNAPSHOT_SCHEMA_VERSION,
      firstSlot: 900,
      snapshotSlot: 1_000,
      generatedAtUnixMs: Date.now(),
      slotMs: 400,
      slotMsSamples: 32,
      leaders: [{ identity: 'A', tpuQuic: '127.0.0.1:1', stake: 5 }],
      leaderIndex: rows.map(() => 0),
      rows,
    });
    const full = new SnapshotReader(sab);
    const slot = new SnapshotReader(sab, { rows: false });
    const table = rpcHostMethods({ config, intake, upstream: null }, full, slot);
    const ctx: CallContext = { key: keys.entries[0], state: new RequestState(undefined as unknown as HttpResponse, 'test', 0), routeMask: keys.entries[0].defaultMask };
    const call = async (body: object): Promise<Record<string, unknown>> =>
      JSON.parse((await dispatchJsonRpc(parseJsonRpcBody(JSON.stringify(body), 10), table, ctx, { onInternalError: (err) => { throw err; } })) as string) as Record<string, unknown>;

    const tx = legacyTransfer().base64;
    const refused = await call({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64', skipPreflight: true, minContextSlot: 5_000 }] });
    expect(refused.error).toMatchObject({ code: -32016, data: { contextSlot: 1_000 } });
    expect(full.lastCopyBytes).toBe(0); // never read
    expect(slot.lastCopyBytes).toBeGreaterThan(0);
    expect(slot.lastCopyBytes).toBeLessThan(2_048); // header + leader index + one leader, no rows

    const leaders = await call({ jsonrpc: '2.0', id: 2, method: 'getLeaderSlots', params: [1_000, 5] });
    expect(leaders.error).toBeUndefined();
    expect(full.lastCopyBytes).toBeGreaterThan(ROWS * ROW_BYTES * 0.9);
  });
});
