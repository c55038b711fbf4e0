// Start-up checks of the telemetry section that need more than its own fields (main thread, cold: once, from
// loadConfig): the validator-location file (resolved relative to the config file, read, checked and merged into
// telemetry.locations.entries) and telemetry.paths against the routes the relay offers. Problems are returned as
// messages naming the field, so a bad file or annotation stops the relay at load instead of crash-looping the
// telemetry thread.
import { isAbsolute, resolve } from 'node:path';
import type { Config } from './schema.js';
import { readLocationsFile } from './locations-file.js';
import { buildRoutePlan } from './route-plan.js';
import { telemetryPathIssues } from './tx-paths.js';

/** Mutates `config` (before it is frozen): locations.file becomes absolute, its entries are appended. */
export function finishTelemetryConfig(config: Config, baseDir: string): string[] {
  const issues: string[] = [];
  const loc = config.telemetry.locations;
  if (loc.file !== undefined) {
    const file = isAbsolute(loc.file) ? loc.file : resolve(baseDir, loc.file);
    try {
      // A new array: zod's default([]) may hand every parse the same one.
      config.telemetry.locations = { file, entries: [...loc.entries, ...readLocationsFile(file)] };
    } catch (err) {
      issues.push(`telemetry.locations.file: ${(err as Error).message}`);
    }
  }
  issues.push(...telemetryPathIssues(config.telemetry, buildRoutePlan(config)));
  return issues;
}
