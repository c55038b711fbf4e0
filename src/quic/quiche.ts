// The quiche binding shipped with @matrixai/quic (BoringSSL + quiche behind napi-rs), loaded as a private copy per
// thread. We drive quiche directly (sans-IO) rather than through @matrixai/quic's high-level classes: see
// docs/tpu-quic.md.
//
// Why a private copy: the binding is built with napi-rs 2.10, whose typed-array references are released through
// process-global statics: MAIN_THREAD_ID (the first thread that loaded the library) and CUSTOM_GC_TSFN (a
// thread-safe function of the *last* thread that loaded it). A Uint8Array handed to the binding on any other thread
// is released by that function on another thread's isolate: V8 aborts ("object_ != kGlobalHandleZapValue") or
// segfaults, and once any loading thread exits every later reference leaks (docs/known-issues.md has the core dumps).
// dlopen of a different file gets its own statics, so each thread loading its own copy is the "main thread" of it.
// The copy is unlinked as soon as it is mapped (src/native/private-addon.ts).
import { createRequire } from 'node:module';
import type { Quiche } from '@matrixai/quic/native/index.js';
import { dlopenPrivateCopy } from '../native/private-addon.js';
import type { Config, Connection, ConnectionError, Header } from '@matrixai/quic/native/types.js';

const require = createRequire(import.meta.url);

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

function resolveBinaryPath(): string {
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

function loadQuiche(): Quiche {
  const binaryPath = resolveBinaryPath();
  try {
    return dlopenPrivateCopy<Quiche>(binaryPath, 'quiche');
  } catch (error) {
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
