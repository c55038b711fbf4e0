// glibc's malloc_trim(0) for the thread that calls it (cold: a few calls an hour at most). Loads the addon the build
// compiled from native/malloc-trim/malloc_trim.c (scripts/malloc-trim-build.ts); null where it is absent (no C
// compiler at build time, a libc without malloc_trim). Node-API: one build serves every Node version and thread.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './project-root.js';

/** Where the build writes the addon, relative to the checkout's root. */
export const MALLOC_TRIM_ADDON = join('dist', 'native', 'malloc-trim', 'malloc_trim.node');

/** Gives every malloc arena's free pages back to the kernel; true when some were. */
export type MallocTrim = () => boolean;

let loaded: MallocTrim | null | undefined;

/** The trim, or null (and why) when this build has none. Loaded once per thread. */
export function loadMallocTrim(): { trim: MallocTrim } | { trim: null; reason: string } {
  if (loaded === undefined) {
    const file = join(projectRoot(), MALLOC_TRIM_ADDON);
    if (!existsSync(file)) {
      loaded = null;
      return { trim: null, reason: `${MALLOC_TRIM_ADDON} not built (make build: needs a C compiler and glibc)` };
    }
    try {
      const m = { exports: {} as { trim?: unknown } };
      process.dlopen(m, file);
      loaded = typeof m.exports.trim === 'function' ? (m.exports.trim as MallocTrim) : null;
    } catch (e) {
      loaded = null;
      return { trim: null, reason: `${MALLOC_TRIM_ADDON} did not load: ${e instanceof Error ? e.message : String(e)}` };
    }
  }
  return loaded === null ? { trim: null, reason: `${MALLOC_TRIM_ADDON} has no trim()` } : { trim: loaded };
}
