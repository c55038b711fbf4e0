// The telemetry thread follows a cluster that restarts on the same URL (the relay's embedded localnet after a crash):
// when the slot goes far back, the thread forgets the old schedule and nodes and publishes the new cluster's rows and
// TPU addresses at once, instead of ignoring every slot until the new cluster passes the old one's highest.
import { afterAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/log/logger.js';
import { startLocalnet, type Localnet } from '../../../src/localnet/localnet.js';
import { SnapshotReader } from '../../../src/telemetry/snapshot.js';
import { TelemetryThread } from '../../../src/telemetry/telemetry-thread.js';
import { waitFor } from '../../helpers/wait-for.js';
import { distUrl, ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';

let localnet: Localnet | undefined;
let thread: TelemetryThread | undefined;
afterAll(async () => {
  await thread?.stop();
  await localnet?.stop();
});


describe('telemetry across a cluster restart on the same URL', () => {
  it('a slot far below the last one reloads schedule and nodes: fresh rows with the new TPU ports within seconds', async () => {
    ensureDistFresh();
    localnet = await startLocalnet({ validators: 2, slotMs: 50, slotsPerEpoch: 64 });
    const port = Number(new URL(localnet.rpcUrl).port);
    const config = configSchema.parse({ telemetry: { probe: { intervalMs: 60_000, timeoutMs: 1_000 }, horizonSlots: 32 } });
    thread = new TelemetryThread({
      telemetry: config.telemetry,
      rpcUrl: localnet.rpcUrl,
      routes: { direct: true, staticPeers: [], jito: false },
      logLevel: 'warn',
      log: createLogger('silent', 'test'),
      workerFile: new URL(distUrl('workers/telemetry-worker.js')),
    });
    thread.start();
    const reader = new SnapshotReader(thread.snapshot);
    await waitFor('the first cluster past slot 60 with leaders', () => {
      const v = reader.current();
      return v !== null && v.snapshotSlot > 60 && v.leaders.length > 0;
    });
    const oldTpus = new Set(reader.current()!.leaders.map((l) => l.tpuQuic));
    const oldSlot = reader.current()!.snapshotSlot;

    await localnet.stop();
    localnet = await startLocalnet({ validators: 2, slotMs: 50, slotsPerEpoch: 64, rpcPort: port });
    const newTpus = new Set(localnet.validators.map((v) => v.tpuQuic));
    // Well before the new cluster could reach the old slot (it starts at 0, 20 slots a second).
    const v = (await waitFor(
      'the new cluster in the snapshot',
      () => {
        const x = reader.current();
        return x !== null && x.snapshotSlot < oldSlot && x.leaders.length > 0 && x.leaders.every((l) => newTpus.has(l.tpuQuic ?? '')) ? x : null;
      },
      (x) => x !== null,
      10_000,
      20,
    ))!;
    expect(v.snapshotSlot).toBeLessThan(oldSlot);
    expect(v.rowCount).toBeGreaterThan(0);
    for (const l of v.leaders) expect(oldTpus.has(l.tpuQuic ?? '')).toBe(false);
  });
});
