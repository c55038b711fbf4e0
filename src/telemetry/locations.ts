// The validator-location dataset (telemetry thread; built once at start, cold; lookup per leader per publish).
// Entries come from telemetry.locations.entries; telemetry.locations.file (a YAML/JSON list of the same entries,
// relative to the config file) is read and checked by loadConfig (src/config/locations-file.ts) and merged into entries, so a
// bad file stops the relay at start instead of failing inside the telemetry thread. Matched by validator identity
// first, then by the IP of its tpuQuic address.
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

/** The table the telemetry thread uses: telemetry.locations.entries (the file was merged in by loadConfig). */
export function loadLocations(t: TelemetryConfig): LocationTable {
  return new LocationTable(t.locations.entries);
}
