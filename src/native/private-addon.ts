// Maps a private copy of a native addon: the binary, byte for byte, is copied to a fresh directory,
// process.dlopen()ed and unlinked at once, so nothing is left on disk. A different file gets its own copy of the
// library's statics (see src/quic/quiche.ts for why that matters). Nothing is patched.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { threadId } from 'node:worker_threads';

/** Throws the last error when no directory could hold an executable mapping. */
export function dlopenPrivateCopy<T extends object>(binaryPath: string, label: string): T {
  let lastError: unknown;
  // The temp dir first; the package's own directory when the temp dir is mounted noexec.
  for (const parent of [tmpdir(), dirname(binaryPath)]) {
    let dir: string | undefined;
    try {
      dir = mkdtempSync(join(parent, `.slotrelay-${label}-${process.pid}-${threadId}-`));
      const copy = join(dir, `${label}.node`);
      copyFileSync(binaryPath, copy);
      const module = { exports: {} as T };
      process.dlopen(module, copy);
      return module.exports;
    } catch (error) {
      lastError = error;
    } finally {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    }
  }
  throw lastError;
}
