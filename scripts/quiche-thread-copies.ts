// Build step (cold; `make build` runs it after tsc): writes dist/native/quiche-threads/quiche-<k>.node for k in
// [1, MAX_QUIC_THREADS), byte-for-byte copies of the installed quiche binding, one per QUIC thread beyond the first
// (rings.quicThreads > 1: each thread that uses the binding needs a file of its own, src/quic/quiche-binary.ts). Each
// copy is checked (sha256) after it is written; an existing copy that matches is left alone. Nothing is patched.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { MAX_QUIC_THREADS, quicheThreadCopiesDir, quicheThreadCopyPath, resolveQuicheBinary, sha256Of } from '../src/quic/quiche-binary.js';

function main(): number {
  let shipped: string;
  try {
    shipped = resolveQuicheBinary();
  } catch (err) {
    console.log(`quiche-thread-copies: ${(err as Error).message}; no copies made (rings.quicThreads must stay 1)`);
    return 0;
  }
  const want = sha256Of(shipped);
  mkdirSync(quicheThreadCopiesDir(), { recursive: true });
  let written = 0;
  for (let k = 1; k < MAX_QUIC_THREADS; k++) {
    const path = quicheThreadCopyPath(k);
    if (existsSync(path) && sha256Of(path) === want) continue;
    copyFileSync(shipped, path);
    if (sha256Of(path) !== want) {
      console.error(`quiche-thread-copies: ${path} does not match ${shipped} after copying`);
      return 1;
    }
    written++;
  }
  console.log(`quiche-thread-copies: ${MAX_QUIC_THREADS - 1} copies in ${quicheThreadCopiesDir()} (${written} written)`);
  return 0;
}

process.exitCode = main();
