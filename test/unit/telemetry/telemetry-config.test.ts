// Telemetry start-up checks through the real loadConfig (the location file, telemetry.paths vs routes), and the
// measurement ports of TelemetryThread not accumulating across egress restarts.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ConfigError, loadConfig } from '../../../src/config/load.js';
import { configSchema } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/log/logger.js';
import { postRouteMeasurements } from '../../../src/telemetry/measurements.js';
import { TelemetryThread } from '../../../src/telemetry/telemetry-thread.js';

const ID = 'Leader1111111111111111111111111111111111111';

function configIn(dir: string, telemetry: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  const file = join(dir, 'config.yaml');
  writeFileSync(file, stringify({ telemetry, ...extra }));
  return file;
}

describe('telemetry.locations.file', () => {
  it('is read relative to the config file (not the working directory) and merged into entries', () => {
    const dir = mkdtempSync(join(tmpdir(), 'slotrelay-loc-'));
    mkdirSync(join(dir, 'data'));
    writeFileSync(join(dir, 'data', 'locations.yaml'), stringify([{ identity: ID, dataCenterKey: 'fra-1', region: 'fra', latitude: 50, longitude: 8 }]));
    const inline = { ip: '10.0.0.1', dataCenterKey: 'ams-1', region: 'ams', latitude: 52, longitude: 4 };
    const c = loadConfig({ file: configIn(dir, { locations: { file: 'data/locations.yaml', entries: [inline] } }) });
    expect(c.telemetry.locations.file).toBe(join(dir, 'data', 'locations.yaml'));
    expect(c.telemetry.locations.entries).toEqual([inline, { identity: ID, dataCenterKey: 'fra-1', region: 'fra', latitude: 50, longitude: 8 }]);
    // The default (schema) entries array is not shared with later loads.
    expect(configSchema.parse({}).telemetry.locations.entries).toEqual([]);
  });

  it('a missing or invalid file stops the load with a message naming the field, the file and the entry', () => {
    const dir = mkdtempSync(join(tmpdir(), 'slotrelay-loc-'));
    expect(() => loadConfig({ file: configIn(dir, { locations: { file: 'nope.yaml' } }) })).toThrow(ConfigError);
    expect(() => loadConfig({ file: configIn(dir, { locations: { file: 'nope.yaml' } }) })).toThrow(
      new RegExp(`telemetry\\.locations\\.file: ${join(dir, 'nope.yaml').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: cannot read`),
    );
    writeFileSync(join(dir, 'bad.json'), JSON.stringify([{ identity: ID, region: 'fra', latitude: 500, longitude: 8 }]));
    expect(() => loadConfig({ file: configIn(dir, { locations: { file: 'bad.json' } }) })).toThrow(/bad\.json: invalid location entries: 0\.dataCenterKey: Required; 0\.latitude: Number must be less than or equal to 90/);
    writeFileSync(join(dir, 'broken.yaml'), 'a: [');
    expect(() => loadConfig({ file: configIn(dir, { locations: { file: 'broken.yaml' } }) })).toThrow(/broken\.yaml: cannot read the validator-location file/);
  });
});

describe('telemetry.paths', () => {
  it('annotations must match a configured route', () => {
    const dir = mkdtempSync(join(tmpdir(), 'slotrelay-paths-'));
    const paths = [{ provider: 'static:ams-1', kind: 'static', peer: '10.0.0.1:8009', region: 'local', hopLatencyMs: 3 }];
    expect(() => loadConfig({ file: configIn(dir, { paths }) })).toThrow(/telemetry\.paths\.0: static path "static:ams-1" matches no routes\.static\.peers entry/);
    const c = loadConfig({ file: configIn(dir, { paths }, { routes: { static: { peers: ['10.0.0.1:8009'] } } }) });
    expect(c.telemetry.paths[0].peer).toBe('10.0.0.1:8009');
  });
});

describe('TelemetryThread measurement ports', () => {
  function thread(): TelemetryThread {
    const t = configSchema.parse({ telemetry: { snapshotCapacityBytes: 65_536 } }).telemetry;
    return new TelemetryThread({ telemetry: t, rpcUrl: 'http://127.0.0.1:9', routes: { direct: true, staticPeers: [], jito: false }, logLevel: 'silent', log: createLogger('silent', 'test') });
  }

  it('a port whose other end closed (the worker thread exited) is dropped', async () => {
    const t = thread();
    const ports = [t.measurementPort(), t.measurementPort(), t.measurementPort()];
    expect(t.measurementPortCount).toBe(3);
    ports[0].close();
    ports[1].close();
    await new Promise((r) => setTimeout(r, 50));
    expect(t.measurementPortCount).toBe(1);
    await t.stop();
    expect(t.measurementPortCount).toBe(0);
  });

  it('a port silent for 30 s (its egress task ended in a thread Piscina kept) is closed; reporting ports stay', async () => {
    const t = thread();
    const live = t.measurementPort();
    const t0 = Date.now();
    t.measurementPort(); // an ended task: never posts
    await new Promise((r) => setTimeout(r, 300));
    postRouteMeasurements(live, []); // the egress heartbeat: a batch, empty or not, every second
    await new Promise((r) => setTimeout(r, 50));
    t.sweepPorts(t0 + 29_000);
    expect(t.measurementPortCount).toBe(2);
    t.sweepPorts(t0 + 30_100); // the silent port: 30 s; the live one: < 30 s since its last batch
    expect(t.measurementPortCount).toBe(1);
    // Restarts: 20 egress tasks that each ask for a port and end do not leave 20 ports behind.
    for (let i = 0; i < 20; i++) t.measurementPort().close();
    await new Promise((r) => setTimeout(r, 50));
    expect(t.measurementPortCount).toBe(1);
    await t.stop();
  });
});
