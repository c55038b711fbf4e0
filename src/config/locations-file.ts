// The validator-location file, telemetry.locations.file (main thread, cold: once, from loadConfig): read and checked
// at load so that a bad file stops the relay at start instead of failing inside the telemetry thread.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { locationEntrySchema } from './schema.js';
import { formatOfFile, parseStructuredText } from './parse-failure.js';
import { issueText } from './issue-text.js';

export type LocationEntry = z.infer<typeof locationEntrySchema>;

/** Read and check a location file; throws an Error whose message names the file and every bad entry. */
export function readLocationsFile(file: string): LocationEntry[] {
  let raw: unknown;
  try {
    const text = readFileSync(file, 'utf8');
    raw = parseStructuredText(text, formatOfFile(file));
  } catch (err) {
    throw new Error(`${file}: cannot read the validator-location file: ${(err as Error).message}`);
  }
  const parsed = z.array(locationEntrySchema).safeParse(raw);
  if (!parsed.success) throw new Error(`${file}: invalid location entries: ${parsed.error.issues.map(issueText).join('; ')}`);
  return parsed.data;
}
