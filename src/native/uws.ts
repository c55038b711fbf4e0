// uWebSockets.js (@rjweb/uws 1.5.0), loaded so that its HTTP idle timeout is ours to choose.
//
// uWS closes a keep-alive connection after HTTP_IDLE_TIMEOUT_S = 10 s without traffic (8-12 s: uSockets sweeps its
// timeouts every 4 s). The constant is compiled into the addon and no JS API changes it, but web3.js keeps idle
// sockets for 19 s (agentkeepalive freeSocketTimeout, ignoring our keep-alive hint): a request sent on a socket the
// relay has just closed fails with ECONNRESET in the trader's process. Rebuilding the addon is not possible from the
// npm package, so for the one binary we have verified (sha256 below) we map a private copy whose 20 inlined
// `us_socket_timeout(s, HTTP_IDLE_TIMEOUT_S)` sites add our tick count instead of 3. Every other binary is loaded
// as shipped and the front announces what it guarantees: 8 s. docs/known-issues.md tells how the sites were found.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as UwsModule from 'uWebSockets.js';
import { dlopenPrivateCopy } from './private-addon.js';

export type Uws = typeof UwsModule;

const require = createRequire(import.meta.url);

/** uWS as shipped sets (timestamp + 3 ticks) % 240: the connection closes 8-12 s after its last activity. */
export const STOCK_IDLE_TIMEOUT_SECONDS = 8;
/** uSockets' timeout sweep period (LIBUS_TIMEOUT_GRANULARITY). */
const TICK_SECONDS = 4;
/** Socket timeouts are a byte compared against a timestamp that wraps at 240 ticks (uSockets). */
const MAX_TICKS = 239;
export const MIN_IDLE_TIMEOUT_SECONDS = 8;
export const MAX_IDLE_TIMEOUT_SECONDS = (MAX_TICKS - 1) * TICK_SECONDS;

/**
 * A binary we have disassembled. Each site is `add $0x3,%reg` (83 /0 ib) right after `movzbl 0xc(%ctx),%reg`
 * (the loop timestamp), computing `(timestamp + 3) % 240` with the constant written twice: the add at `site` feeds
 * the modulo's division, the add at `site + 0x1a` is the final `+ 3`. Both imm8 bytes are replaced.
 */
export interface VerifiedBinary {
  readonly sha256: string;
  readonly sites: readonly number[];
}

export const VERIFIED_UWS_BINARIES: Readonly<Record<string, VerifiedBinary>> = {
  // uws_linux_x64_115.node of @rjweb/uws 1.5.0 (uWebSockets.js source commit 2e80461f): HttpContext on_open,
  // on_data, on_writable, the HttpRouter handler wrappers, HttpResponse write/cork/resume; 10 sites for plain HTTP,
  // 10 for SSL. (WebSocket idle timeouts are per-app options and are not touched.)
  'linux-x64-115': {
    sha256: '89986c5f67d1964a65e75ff87542d91f5aae27149e7b9842c1eade929ef144dc',
    sites: [
      0xe5eba, 0xe610b, 0xea4d2, 0xea8e5, 0xeaca6, 0xeaf5e, 0xeb041, 0xf786a, 0xf7b0b, 0xfa2b2, 0xfa7b5, 0xfabbe,
      0xfae28, 0xfaef1, 0x10388f, 0x104cc6, 0x10596d, 0x106eef, 0x10832a, 0x10902d,
    ],
  },
};

const SECOND_ADD_OFFSET = 0x1a;

/** Ticks whose timeout fires no earlier than `seconds` after the last activity (the first tick comes within 4 s). */
export function ticksFor(seconds: number): number {
  return Math.ceil(seconds / TICK_SECONDS) + 1;
}

/**
 * Returns a patched copy of `image`, or a reason why this image cannot be patched. Checks every byte it replaces:
 * `83 Cx 03` at each site and its second add, and the `0F B6 xx 0C` timestamp load just before the site.
 */
export function patchIdleTimeout(image: Uint8Array, verified: VerifiedBinary, seconds: number): Uint8Array | string {
  const sha = createHash('sha256').update(image).digest('hex');
  if (sha !== verified.sha256) return `binary sha256 ${sha.slice(0, 12)}… is not the verified one`;
  const ticks = ticksFor(seconds);
  if (!Number.isInteger(ticks) || ticks < 1 || ticks > MAX_TICKS) return `idle timeout ${seconds} s is out of range`;
  const out = Uint8Array.from(image);
  for (const site of verified.sites) {
    const loadsTimestamp = [site - 4, site - 6].some((at) => out[at] === 0x0f && out[at + 1] === 0xb6 && out[at + 3] === 0x0c);
    if (!loadsTimestamp) return `no timestamp load before site 0x${site.toString(16)}`;
    for (const at of [site, site + SECOND_ADD_OFFSET]) {
      const modrm = out[at + 1] ?? 0;
      if (out[at] !== 0x83 || (modrm & 0xf8) !== 0xc0 || out[at + 2] !== 0x03) return `unexpected bytes at 0x${at.toString(16)}`;
      out[at + 2] = ticks;
    }
  }
  return out;
}

export interface UwsRuntime {
  readonly uws: Uws;
  /** Idle keep-alive connections live at least this long: announced in every response's keep-alive header. */
  readonly idleTimeoutSeconds: number;
  /** Why the stock binary was loaded, when it was. */
  readonly fallbackReason?: string;
}

let loaded: UwsRuntime | undefined;

function stock(reason: string | undefined, binaryPath: string): UwsRuntime {
  const uws = require(binaryPath) as Uws;
  return { uws, idleTimeoutSeconds: STOCK_IDLE_TIMEOUT_SECONDS, ...(reason === undefined ? {} : { fallbackReason: reason }) };
}

/**
 * The process's uWS. The first call decides the idle timeout (the front thread's config; none: uWS as shipped);
 * later calls get the same runtime whatever they ask for — one copy of uWS per process.
 */
export function loadUws(idleTimeoutSeconds?: number): UwsRuntime {
  if (loaded !== undefined) return loaded;
  const target = `${process.platform}-${process.arch}-${process.versions.modules}`;
  const binaryPath = join(dirname(require.resolve('uWebSockets.js')), `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  const verified = VERIFIED_UWS_BINARIES[target];
  if (idleTimeoutSeconds === undefined) {
    loaded = stock(undefined, binaryPath);
  } else if (verified === undefined) {
    loaded = stock(`no verified uWS binary for ${target}`, binaryPath);
  } else {
    const patched = patchIdleTimeout(readFileSync(binaryPath), verified, idleTimeoutSeconds);
    if (typeof patched === 'string') {
      loaded = stock(patched, binaryPath);
    } else {
      try {
        loaded = { uws: dlopenPrivateCopy<Uws>(binaryPath, 'uws', patched), idleTimeoutSeconds };
      } catch (error) {
        loaded = stock(`cannot map the patched copy: ${(error as Error).message}`, binaryPath);
      }
    }
  }
  return loaded;
}
