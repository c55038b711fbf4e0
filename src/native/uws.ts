// Chooses and loads the process's uWebSockets.js build (cold: once per process, at start). Builds are tried in the
// order of src/native/uws-builds.ts (docs/http-runtime.md): our own build from the vendored sources when `make build`
// compiled it for this Node (src/native/uws-source-build.ts), else the maintained upstream build when its package is
// installed and it can load here, else the legacy build we shipped before. Exactly one native library is loaded:
// the choice is made from the host's facts (Node ABI, glibc, files present and verified) before any dlopen, and a
// dlopen that still fails moves on to the next build. Nothing is written or patched at run time; on glibc < 2.38 the
// maintained build is loaded from the copy the build step made (scripts/uws-glibc-compat.ts), checked by hash.
//
// Timeouts (uSockets sweeps them every 4 s). Our build (its patch 0002) and the maintained build have two per-app settings, set on every App made
// here: `setIdleTimeout` — a connection that has not sent a whole request line and headers, or whose body stalls,
// is closed — always SLOW_CLIENT_TIMEOUT_SECONDS (8-12 s), whatever the config; and `setResponseTimeout` — how long an idle
// keep-alive connection stays open after its last answer — from http.idleTimeoutSeconds (at least N s, closed
// within 4 s after; web3.js keeps pooled sockets 19 s). The legacy build has one compiled-in 10 s timer for both:
// idle connections close 8-12 s after the last answer and we announce 8 (docs/http-runtime.md).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as UwsModule from 'uWebSockets.js';
import { sha256 } from './elf-glibc-compat.js';
import { GLIBC_COMPAT_COPIES, MAINTAINED_MIN_GLIBC, UWS_BUILDS, type UwsBuildId, type UwsBuildSpec } from './uws-builds.js';
import { projectRoot } from './project-root.js';
import { locateSourceBuild, type SourceBuildManifest } from './uws-source-build.js';

/** The API our code uses: the legacy build's names (`closeSocket`, `getSocketPort`), which loadUws provides on both. */
export type Uws = typeof UwsModule;

const require = createRequire(import.meta.url);

/** The legacy build closes an idle keep-alive connection 8-12 s after its last answer: what we announce there. */
export const STOCK_IDLE_TIMEOUT_SECONDS = 8;
/** Slow-client limit (request line + headers, or a stalled body): uWS's own 10 s, i.e. closed 8-12 s in. */
export const SLOW_CLIENT_TIMEOUT_SECONDS = 10;
const TICK_SECONDS = 4;
/** uSockets keeps a timeout as a tick byte compared with a timestamp that wraps at 240 ticks. */
const MAX_TICKS = 239;
export const MIN_IDLE_TIMEOUT_SECONDS = 8;
export const MAX_IDLE_TIMEOUT_SECONDS = (MAX_TICKS - 1) * TICK_SECONDS;
/** When nothing else is asked (the localnet facade): http.idleTimeoutSeconds' default. */
const DEFAULT_IDLE_TIMEOUT_SECONDS = 60;

/**
 * The setting that keeps an idle connection open at least `seconds`: uSockets arms floor((s + 3) / 4) ticks and the
 * first sweep comes within 4 s, so the close falls (ticks - 1) * 4 to ticks * 4 s after the answer.
 */
export function responseTimeoutFor(seconds: number): number {
  return (Math.ceil(seconds / TICK_SECONDS) + 1) * TICK_SECONDS - 3;
}

export interface LoadedBuild {
  readonly id: UwsBuildId;
  readonly packageName: string;
  readonly packageVersion: string;
  readonly uwsVersion: string;
  /** The file loaded, relative to the project root when inside it. */
  readonly binary: string;
  /** Loaded from the build-time copy with glibc 2.38 imports rebound (glibc < 2.38 hosts). */
  readonly glibcCompat: boolean;
}

export interface UwsRuntime {
  readonly uws: Uws;
  readonly build: LoadedBuild;
  /** Idle keep-alive connections live at least this long: announced in every answer's keep-alive header. */
  readonly idleTimeoutSeconds: number;
  /** Builds tried before this one, and why each was passed over. */
  readonly passedOver: readonly { readonly id: UwsBuildId; readonly reason: string }[];
}

/** No build loads on this host (the start error names every build and why). */
export class NoUwsBuildError extends Error {
  constructor(readonly reasons: readonly { readonly id: UwsBuildId; readonly reason: string }[]) {
    super(
      `no uWebSockets.js build loads on Node ${process.versions.node} (ABI ${process.versions.modules}, ${process.platform}-${process.arch}, glibc ${glibcVersion() ?? 'none'}): ` +
        reasons.map((r) => `${r.id}: ${r.reason}`).join('; ') +
        ' (docs/http-runtime.md lists the builds and where each runs)',
    );
  }
}

/** The project root: the nearest directory above this module holding package.json (src/ or dist/src/ both work). */
export function glibcCompatDir(): string {
  return join(projectRoot(), 'dist', 'native', 'uws-glibc-compat');
}

/** The running glibc, e.g. "2.36"; undefined off glibc (musl, macOS, Windows). */
export function glibcVersion(): string | undefined {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return header?.glibcVersionRuntime;
}

function olderThan(version: string, min: string): boolean {
  const [a = 0, b = 0] = version.split('.').map(Number);
  const [c = 0, d = 0] = min.split('.').map(Number);
  return a < c || (a === c && b < d);
}

export function binaryName(): string {
  return `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
}

/** Each package's main file (resolved, never loaded: its uws.js would load its own binary). Literal specifiers. */
const PACKAGE_MAIN: Readonly<Record<Exclude<UwsBuildId, 'source'>, () => string>> = {
  maintained: () => require.resolve('@btc-vision/uwebsockets.js'),
  legacy: () => require.resolve('uWebSockets.js'),
};

type Located = { readonly path: string; readonly glibcCompat: boolean; readonly manifest?: SourceBuildManifest } | { readonly reason: string };

/** Where this build's binary for this host is, or why there is none; no file is loaded here. */
function locate(spec: UwsBuildSpec): Located {
  if (spec.id === 'source') {
    const own = locateSourceBuild();
    return 'reason' in own ? own : { path: own.path, glibcCompat: false, manifest: own.manifest };
  }
  let dir: string;
  try {
    dir = dirname(PACKAGE_MAIN[spec.id]());
  } catch {
    return { reason: `package ${spec.packageName} is not installed` };
  }
  const own = join(dir, binaryName());
  if (!existsSync(own)) return { reason: `no ${binaryName()} in ${spec.packageName} (Node ${process.versions.node} is not supported by it)` };
  const glibc = glibcVersion();
  if (spec.id !== 'maintained' || glibc === undefined || !olderThan(glibc, MAINTAINED_MIN_GLIBC)) return { path: own, glibcCompat: false };
  const key = `${process.platform}-${process.arch}-${process.versions.modules}`;
  const pinned = GLIBC_COMPAT_COPIES[key];
  if (pinned === undefined) return { reason: `its binaries need glibc ${MAINTAINED_MIN_GLIBC} (this host has ${glibc}) and there is no glibc-compat copy for ${key}` };
  const copy = join(glibcCompatDir(), binaryName());
  if (!existsSync(copy)) return { reason: `its binaries need glibc ${MAINTAINED_MIN_GLIBC} (this host has ${glibc}) and ${copy} was not built (npm run build)` };
  const actual = sha256(readFileSync(copy));
  if (actual !== pinned.output) return { reason: `the glibc-compat copy ${copy} has sha256 ${actual.slice(0, 12)}…, not the verified ${pinned.output.slice(0, 12)}…` };
  return { path: copy, glibcCompat: true };
}

/** The maintained build's per-app timeout setters (in its binary, not in its index.d.ts). */
interface TimeoutSetters {
  setIdleTimeout(seconds: number): void;
  setResponseTimeout(seconds: number): void;
}

/**
 * The maintained build under the legacy build's names (`closeSocket`, `getSocketPort`), with every App it makes set
 * to our timeouts (see the header).
 */
function normalise(id: UwsBuildId, exports: Record<string, unknown>, idleTimeoutSeconds: number): Uws {
  // `source` and `maintained` share the upstream API and the two timeout setters.
  if (id === 'legacy') return exports as unknown as Uws;
  const makeApp = exports.App as (options?: unknown) => TimeoutSetters;
  const App = (options?: unknown): TimeoutSetters => {
    const app = options === undefined ? makeApp() : makeApp(options); // an explicit undefined aborts the process
    app.setIdleTimeout(SLOW_CLIENT_TIMEOUT_SECONDS);
    app.setResponseTimeout(responseTimeoutFor(idleTimeoutSeconds));
    return app;
  };
  return { ...exports, App, closeSocket: exports.us_listen_socket_close, getSocketPort: exports.us_socket_local_port } as unknown as Uws;
}

/** `SLOTRELAY_UWS_BUILD=legacy|maintained` restricts the choice to one build (tests, and an operator's way back). */
export function requestedBuilds(env: NodeJS.ProcessEnv = process.env): readonly UwsBuildSpec[] {
  const want = env.SLOTRELAY_UWS_BUILD;
  if (want === undefined || want === '' || want === 'auto') return UWS_BUILDS;
  const only = UWS_BUILDS.filter((b) => b.id === want);
  if (only.length === 0) throw new Error(`SLOTRELAY_UWS_BUILD=${want}: expected auto, ${UWS_BUILDS.map((b) => b.id).join(', ').replace(/, (\w+)$/, ' or $1')}`);
  return only;
}

let loaded: UwsRuntime | undefined;

/**
 * The process's uWS: the first call chooses and loads it (its `idleTimeoutSeconds`, http.idleTimeoutSeconds, applies
 * where the build can honour it); later calls get the same runtime. Throws NoUwsBuildError.
 */
export function loadUws(idleTimeoutSeconds = DEFAULT_IDLE_TIMEOUT_SECONDS): UwsRuntime {
  if (loaded !== undefined) return loaded;
  const passedOver: { id: UwsBuildId; reason: string }[] = [];
  const root = projectRoot();
  for (const spec of requestedBuilds()) {
    const where = locate(spec);
    if ('reason' in where) {
      passedOver.push({ id: spec.id, reason: where.reason });
      continue;
    }
    let exports: Record<string, unknown>;
    try {
      exports = require(where.path) as Record<string, unknown>;
    } catch (error) {
      passedOver.push({ id: spec.id, reason: `cannot load ${where.path}: ${(error as Error).message.split('\n')[0] ?? ''}` });
      continue;
    }
    const binary = where.path.startsWith(root) ? where.path.slice(root.length + 1) : where.path;
    const m = where.manifest;
    loaded = {
      uws: normalise(spec.id, exports, idleTimeoutSeconds),
      build:
        m === undefined
          ? { id: spec.id, packageName: spec.packageName, packageVersion: spec.packageVersion, uwsVersion: spec.uwsVersion, binary, glibcCompat: where.glibcCompat }
          : {
              id: spec.id,
              packageName: spec.packageName,
              packageVersion: `${m.release}+${m.patches.length} patches (uWebSockets.js ${m.upstream.uWebSocketsJs.slice(0, 7)}, uWebSockets ${m.upstream.uWebSockets.slice(0, 7)}, uSockets ${m.upstream.uSockets.slice(0, 7)}; ${m.compiler}; key ${m.key.slice(0, 12)})`,
              uwsVersion: m.release,
              binary,
              glibcCompat: false,
            },
      idleTimeoutSeconds: spec.id === 'legacy' ? STOCK_IDLE_TIMEOUT_SECONDS : idleTimeoutSeconds,
      passedOver,
    };
    return loaded;
  }
  throw new NoUwsBuildError(passedOver);
}

/**
 * One line for the banner and logs: "uWS v20.57.0 (@btc-vision/uwebsockets.js 20.57.0; maintained)", or for our build
 * "uWS v20.57.0 (built from vendor/uWebSockets.js v20.57.0+8 patches (…); source)".
 */
export function describeBuild(b: LoadedBuild): string {
  if (b.id === 'source') return `uWS ${b.uwsVersion} (built from ${b.packageName} ${b.packageVersion}; ${b.id})`;
  return `uWS ${b.uwsVersion} (${b.packageName} ${b.packageVersion}${b.glibcCompat ? ', glibc-2.38 imports rebound at build time' : ''}; ${b.id})`;
}
