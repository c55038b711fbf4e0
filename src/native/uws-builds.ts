// The uWebSockets.js builds the relay can run on (cold: read at start and by the build step), newest first. Which
// one loads where, and what each fixes, is docs/http-runtime.md.
//
// `source`: our own build of upstream uWebSockets.js v20.57.0 from vendor/uWebSockets.js with vendor/uws-patches
// (HTTP/1.0, bare LF, absolute-form targets, per-app timeouts), compiled by `make build` for the Node running it
// (scripts/uws-build.ts); tried first wherever it was built.
// `maintained`: upstream uWS v20.57.0 as republished on the npm registry by @btc-vision (binaries for Node 20/22/24/25;
// its Linux binaries are linked against glibc 2.38). `legacy`: @rjweb/uws 1.5.0, a 2024 repackaging (Node 16/18/20
// only, glibc 2.27), installed under the name `uWebSockets.js`. Their JS APIs differ in two names (see uws.ts).

export type UwsBuildId = 'source' | 'maintained' | 'legacy';

export interface UwsBuildSpec {
  readonly id: UwsBuildId;
  /** What `require.resolve` finds the package by (its package.json sits beside the binaries). */
  readonly packageName: string;
  readonly packageVersion: string;
  /** The uWebSockets.js release the binaries were built from. */
  readonly uwsVersion: string;
}

export const UWS_BUILDS: readonly UwsBuildSpec[] = [
  { id: 'source', packageName: 'vendor/uWebSockets.js', packageVersion: 'built by make build', uwsVersion: 'v20.57.0' },
  { id: 'maintained', packageName: '@btc-vision/uwebsockets.js', packageVersion: '20.57.0', uwsVersion: 'v20.57.0' },
  { id: 'legacy', packageName: 'uWebSockets.js', packageVersion: '1.5.0 (@rjweb/uws)', uwsVersion: 'fork at 2e80461f (2024)' },
];

/**
 * Copies of the maintained build's binaries whose glibc 2.38 imports are rebound to the classic functions
 * (src/native/elf-glibc-compat.ts), made by `scripts/uws-glibc-compat.ts` into dist/native/uws-glibc-compat/ at build
 * time. Keyed `<platform>-<arch>-<NODE_MODULE_VERSION>`; `input` is the package's binary, `output` the copy. The build
 * refuses any other input, checks its output against `output`, and the loader checks the copy again before loading.
 */
export const GLIBC_COMPAT_COPIES: Readonly<Record<string, { readonly input: string; readonly output: string }>> = {
  // Each: __isoc23_sscanf -> sscanf, __isoc23_strtol -> strtol, __isoc23_strtoul -> strtoul. (The arm64 binaries
  // bind to GLIBC_2.17, not GLIBC_2.2.5, and are not covered: no arm64 host to test them on.)
  'linux-x64-115': { input: '5b126ee00bf754b02e97e4c27090365a8562c5820c93f93918ac2212d4503e91', output: '0fdb9722352c4e0f519b42ad8b0c2bd4544b2c27484c1d49ddf143bfd1637cbb' },
  'linux-x64-127': { input: '4b55b1f2cb7a7913febbb65a89496412b96af77e838552980092ba6b33723aac', output: '4ea0943df7d3202b3ada5eb01c40c37c63bb192fd9c7b1abae5082c5cc1f2803' },
  'linux-x64-137': { input: '98128405dba2fb608448e921a979530f70c946a2cc9889c15f2fa70c2d00ab05', output: '8d5817f3a52803cb69a0e3d54f6487b533fda603aa63dab8ea09f9762d992e0b' },
  'linux-x64-141': { input: '813d788b347c6fd76b779d8932311ec05a044e612b4b83af220f16e6ea789683', output: '395fee5c7a644ad0964cc26651b5dd12833c147123c69dbe938fe17eb13a2760' },
};

/** glibc from which the maintained build's own binaries load (their newest symbol version). */
export const MAINTAINED_MIN_GLIBC = '2.38';
