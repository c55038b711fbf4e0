// The quiche binding shipped with @matrixai/quic (BoringSSL + quiche behind napi-rs). Cold: loaded once per thread
// that imports it. We drive quiche directly (sans-IO) rather than through @matrixai/quic's high-level classes: see
// docs/tpu-quic.md.
//
// In the relay one thread loads it: the quic-egress thread (src/config/route-plan.ts), which owns every QUIC socket of the
// process. That thread loads the shipped library as is: nothing is copied or written at run time. With
// rings.quicThreads = N > 1, QUIC thread k >= 1 loads the k-th copy the build wrote (./quiche-binary.ts): a file of
// its own, so statics of its own, and still nothing written at run time. Only when another
// thread of the same process already has it mapped (tests and tools running a localnet's TPU listeners in-process
// next to a relay's QUIC thread, scripts/quiche-thread-stress.ts) does a thread map a private copy, because:
// the binding is built with napi-rs 2.10, whose typed-array references are released through
// process-global statics: MAIN_THREAD_ID (the first thread that loaded the library) and CUSTOM_GC_TSFN (a
// thread-safe function of the *last* thread that loaded it). A Uint8Array handed to the binding on any other thread
// is released by that function on another thread's isolate: V8 aborts ("object_ != kGlobalHandleZapValue") or
// segfaults, and once any loading thread exits every later reference leaks (docs/known-issues.md has the core dumps).
// dlopen of a different file gets its own statics, so each thread loading its own copy is the "main thread" of it.
// The copy is unlinked as soon as it is mapped (src/native/private-addon.ts). "Already mapped" is read from
// /proc/self/maps (process-wide, exact); where it cannot be read every thread maps a copy, as before. Two threads
// loading at the very same moment could both see it unmapped and share the library: only test setups start several
// QUIC threads at once, and they load it on their main thread first.
import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Quiche } from '@matrixai/quic/native/index.js';
import { dlopenPrivateCopy } from '../native/private-addon.js';
import { loadQuicheThreadCopy, quicheThreadCopyChosen, resolveQuicheBinary } from './quiche-binary.js';
import type { Config, Connection, ConnectionError, Header } from '@matrixai/quic/native/types.js';

const require = createRequire(import.meta.url);

/** Whether a thread of this process already mapped the binary; null when /proc/self/maps cannot tell (not Linux). */
function mappedInProcess(binaryPath: string): boolean | null {
  try {
    return readFileSync('/proc/self/maps', 'utf8').includes(realpathSync(binaryPath));
  } catch {
    return null;
  }
}

/** How this thread loaded the binding: the shipped library, or a private copy (tests: one mapping in the relay). */
export let quicheLoad: 'shared-library' | 'private-copy' | 'thread-copy' = 'shared-library';

function loadQuiche(): Quiche {
  const binaryPath = resolveQuicheBinary();
  // QUIC thread k >= 1 of a relay with rings.quicThreads > 1: its own copy, written by the build (quiche-binary.ts).
  const copy = quicheThreadCopyChosen();
  if (copy > 0) {
    quicheLoad = 'thread-copy';
    return loadQuicheThreadCopy<Quiche>(binaryPath, copy);
  }
  // The first thread of the process to load it: the library as shipped, its statics are this thread's.
  if (mappedInProcess(binaryPath) === false) return require(binaryPath) as Quiche;
  quicheLoad = 'private-copy';
  try {
    return dlopenPrivateCopy<Quiche>(binaryPath, 'quiche');
  } catch (error) {
    quicheLoad = 'shared-library';
    // Still works in a process where one thread uses QUIC; with several it can crash (see above).
    process.emitWarning(
      `could not map a private copy of the quiche binding (${(error as Error).message}); sharing one copy between ` +
        'threads can crash the process (docs/known-issues.md)',
      { code: 'SLOTRELAY_QUICHE_SHARED' },
    );
    return require(binaryPath) as Quiche;
  }
}

export const quiche: Quiche = loadQuiche();
export type { Config as QuicheConfig, Connection as QuicheConnection, ConnectionError as QuicheConnectionError };
export type { Header as QuicheHeader };
