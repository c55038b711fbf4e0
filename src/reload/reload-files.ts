// Where `slotrelay reload --config FILE` finds a running relay (main thread and the CLI, cold): the relay started with
// FILE writes FILE.pid (its process id) when it is ready and FILE.reload.json (the last reload's outcome) after each
// reload; both go when it stops. Next to the config because the config file is what names a relay on a host
// (docs/configuration.md "Reload"); a relay that cannot write there still reloads on SIGHUP (`reload --pid`).
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

export const pidFileOf = (configFile: string): string => `${configFile}.pid`;
export const outcomeFileOf = (configFile: string): string => `${configFile}.reload.json`;

/** The last reload as the relay reports it (FILE.reload.json, /health?detail `config.lastReload`). */
export interface ReloadOutcome {
  /** Reloads since start, this one included: the CLI waits for it to grow. */
  readonly seq: number;
  readonly outcome: 'applied' | 'unchanged' | 'refused';
  readonly at: string;
  readonly trigger: string;
  /** Changed config paths (values never shown); for a refusal, also those that would have been applied. */
  readonly changed: readonly string[];
  readonly keys: { readonly added: readonly string[]; readonly changed: readonly string[]; readonly removed: readonly string[] } | null;
  /** Why it was refused (null when applied or unchanged). */
  readonly error: string | null;
}

/** Written whole, then renamed: a reader never sees half a file. */
export function writeAtomically(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

export function readPid(file: string): number | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
  return /^\d+$/.test(text) ? Number(text) : null;
}

export function readOutcome(file: string): ReloadOutcome | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ReloadOutcome;
  } catch {
    return null;
  }
}

export function removeQuietly(file: string): void {
  rmSync(file, { force: true });
}
