// The validator-location dataset (telemetry thread; loaded once at start, cold; lookup per leader per publish).
// Entries come from telemetry.locations.entries and telemetry.locations.file (a YAML/JSON list of the same entries,
// relative to the working directory), matched by validator identity first, then by the IP of its tpuQuic address.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { locationEntrySchema, type TelemetryConfig } from '../config/schema.js';
import type { LeaderLocation } from './route-model.js';

export class LocationTable {
  private readonly byIdentity = new Map<string, LeaderLocation>();
  private readonly byIp = new Map<string, LeaderLocation>();

  constructor(entries: readonly z.infer<typeof locationEntrySchema>[]) {
    for (const e of entries) {
      const loc: LeaderLocation = Object.freeze({ dataCenterKey: e.dataCenterKey, region: e.region, latitude: e.latitude, longitude: e.longitude });
      if (e.identity !== undefined) this.byIdentity.set(e.identity, loc);
      if (e.ip !== undefined) this.byIp.set(e.ip, loc);
    }
  }

  get size(): number {
    return this.byIdentity.size + this.byIp.size;
  }

  lookup(identity: string, tpuQuic: string | null): LeaderLocation | undefined {
    const byId = this.byIdentity.get(identity);
    if (byId !== undefined || tpuQuic === null) return byId;
    return this.byIp.get(ipOf(tpuQuic));
  }
}

/** "1.2.3.4:8009" -> "1.2.3.4"; "[::1]:8009" -> "::1". */
export function ipOf(hostPort: string): string {
  if (hostPort.startsWith('[')) return hostPort.slice(1, hostPort.indexOf(']'));
  const i = hostPort.lastIndexOf(':');
  return i < 0 ? hostPort : hostPort.slice(0, i);
}

export function loadLocations(t: TelemetryConfig): LocationTable {
  const entries = [...t.locations.entries];
  if (t.locations.file !== undefined) {
    const file = resolve(t.locations.file);
    const text = readFileSync(file, 'utf8');
    const parsed = z.array(locationEntrySchema).safeParse(file.endsWith('.json') ? JSON.parse(text) : parseYaml(text));
    if (!parsed.success) throw new Error(`${file}: invalid location entries: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    entries.push(...parsed.data);
  }
  return new LocationTable(entries);
}
