// glibc's malloc_trim(0) for the thread that calls it (cold: once per burst of abuse at most). Loads the addon the
// build compiled from native/malloc-trim/malloc_trim.c (scripts/malloc-trim-build.ts); absent, with the reason, where
// it was not built (no C compiler at build time, a libc without malloc_trim) or does not load. Node-API: one build
// serves every Node version and every thread; loaded once per thread that asks (only the quic-egress thread does).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './project-root.js';

/** Where the build writes the addon, relative to the checkout's root. */
export const MALLOC_TRIM_ADDON = join('dist', 'native', 'malloc-trim', 'malloc_trim.node');

/** Gives every malloc arena's free pages back to the kernel, on libuv's thread pool; true when some were. */
export type MallocTrim = () => Promise<boolean>;

export type MallocTrimLoad = { readonly trim: MallocTrim } | { readonly trim: null; readonly reason: string };

let loaded: MallocTrimLoad | undefined;

/** The trim, or null and why this build has none. `file` is for tests; the default is cached per thread. */
export function loadMallocTrim(file?: string): MallocTrimLoad {
  if (file === undefined) return (loaded ??= load(join(projectRoot(), MALLOC_TRIM_ADDON), MALLOC_TRIM_ADDON));
  return load(file, file);
}

function load(file: string, shown: string): MallocTrimLoad {
  if (!existsSync(file)) return { trim: null, reason: `${shown} not built (make build: it needs a C compiler and glibc)` };
  try {
    const m = { exports: {} as { trim?: unknown } };
    process.dlopen(m, file);
    const trim = m.exports.trim;
    return typeof trim === 'function' ? { trim: trim as MallocTrim } : { trim: null, reason: `${shown} has no trim()` };
  } catch (e) {
    return { trim: null, reason: `${shown} did not load: ${e instanceof Error ? e.message : String(e)}` };
  }
}
