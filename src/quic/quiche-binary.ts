// Where the quiche binding's binary is, and the per-thread copies of it (cold: once per thread that loads quiche, and
// once per build). The binding keeps napi-rs statics per loaded file (src/quic/quiche.ts, docs/known-issues.md), so
// every thread of the process that uses QUIC needs a file of its own. The relay's QUIC thread 0 loads the shipped
// file. With rings.quicThreads = N > 1, QUIC thread k in [1, N) loads dist/native/quiche-threads/quiche-<k>.node: a
// byte-for-byte copy written by the build (scripts/quiche-thread-copies.ts, `make build`), checked against the
// shipped file's sha256 before it is loaded. Nothing is written at run time; a missing or different copy refuses to
// load with the command that makes it.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { projectRoot } from '../native/project-root.js';

const require = createRequire(import.meta.url);

/** rings.quicThreads at most (the build writes MAX_QUIC_THREADS - 1 copies, ~3 MB each). */
export const MAX_QUIC_THREADS = 8;

/** The @matrixai/quic platform packages that can hold this machine's binary, in @matrixai/quic's own order. */
function platformPackages(): string[] {
  const { platform, arch } = process;
  if (platform === 'darwin') {
    return arch === 'arm64'
      ? ['darwin-arm64', 'darwin-arm64+x64', 'darwin-x64+arm64', 'darwin-universal']
      : ['darwin-x64', 'darwin-x64+arm64', 'darwin-arm64+x64', 'darwin-universal'];
  }
  return [`${platform}-${arch}`];
}

/** The shipped binary's path (throws naming the packages tried when none is installed). */
export function resolveQuicheBinary(): string {
  const tried: string[] = [];
  for (const target of platformPackages()) {
    const name = `@matrixai/quic-${target}`;
    tried.push(name);
    try {
      return require.resolve(name);
    } catch {
      // next candidate
    }
  }
  throw new Error(`no quiche binary for ${process.platform}-${process.arch} (looked for ${tried.join(', ')})`);
}

export function quicheThreadCopiesDir(): string {
  return join(projectRoot(), 'dist', 'native', 'quiche-threads');
}

export function quicheThreadCopyPath(k: number): string {
  return join(quicheThreadCopiesDir(), `quiche-${k}.node`);
}

export function sha256Of(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Why the copies for `threads` QUIC threads cannot be used, or null when they are all there. Cold: main, at start. */
export function missingQuicheThreadCopies(threads: number): string | null {
  for (let k = 1; k < threads; k++) {
    if (!existsSync(quicheThreadCopyPath(k))) {
      return `rings.quicThreads ${threads} needs the build's per-thread copies of the quiche binding; ${quicheThreadCopyPath(k)} is missing (run \`make build\`)`;
    }
  }
  return null;
}

/** This thread's choice (module state is per thread): 0 = the shipped file, k = the k-th copy. */
let chosen = 0;

/** QUIC thread k >= 1 calls this before anything imports the binding (src/egress/quic/quic-link-owner.ts). */
export function useQuicheThreadCopy(k: number): void {
  if (!Number.isInteger(k) || k < 0 || k >= MAX_QUIC_THREADS) throw new RangeError(`no quiche copy ${k}`);
  chosen = k;
}

export function quicheThreadCopyChosen(): number {
  return chosen;
}

/** Loads copy `k` after checking it is the shipped binary byte for byte. */
export function loadQuicheThreadCopy<T extends object>(shipped: string, k: number): T {
  const path = quicheThreadCopyPath(k);
  if (!existsSync(path)) throw new Error(missingQuicheThreadCopies(k + 1) ?? `${path} is missing`);
  if (sha256Of(path) !== sha256Of(shipped)) throw new Error(`${path} is not the installed quiche binding (run \`make build\` again)`);
  const module = { exports: {} as T };
  process.dlopen(module, path);
  return module.exports;
}
