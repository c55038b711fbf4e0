// Our uWebSockets.js build, made from vendor/uWebSockets.js + vendor/uws-patches by scripts/uws-build.ts (cold: read
// by the build step and once at start by src/native/uws.ts). One binary per Node ABI sits in dist/native/uws-built/,
// each with a manifest naming what it was built from; the loader checks the binary against the manifest's sha256
// before loading it. docs/http-runtime.md "Our build".
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './project-root.js';

/** Upstream commits of the vendored trees (vendor/uWebSockets.js/VENDORED.md). */
export const VENDORED_UPSTREAM = {
  release: 'v20.57.0',
  uWebSocketsJs: 'fee15cda0e4bdb7f1bb0edf8844c1811110af635',
  uWebSockets: 'c8da12b537516489b2e01dacf4d836b5bc74e826',
  uSockets: '182b7e4fe7211f98682772be3df89c71dc4884fa',
} as const;

/** What scripts/uws-build.ts writes next to each binary. */
export interface SourceBuildManifest {
  /** The cache key: sha256 of the vendored sources, the patches, the flags, the Node headers and ABI, the compilers. */
  readonly key: string;
  readonly release: string;
  readonly upstream: { readonly uWebSocketsJs: string; readonly uWebSockets: string; readonly uSockets: string };
  /** Patch file names, in the order applied. */
  readonly patches: readonly string[];
  readonly nodeAbi: string;
  /** The Node version whose headers it was compiled against. */
  readonly nodeHeaders: string;
  readonly platform: string;
  readonly compiler: string;
  /** Wall time of the compile and link, seconds (0 when copied from the cache). */
  readonly buildSeconds: number;
  readonly binarySha256: string;
}

export function sourceBuildDir(): string {
  return join(projectRoot(), 'dist', 'native', 'uws-built');
}

/** `uws_<platform>_<arch>_<abi>` for this process (the binary and the manifest share it). */
export function sourceBuildStem(abi: string = process.versions.modules): string {
  return `uws_${process.platform}_${process.arch}_${abi}`;
}

export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

export type LocatedSourceBuild = { readonly path: string; readonly manifest: SourceBuildManifest } | { readonly reason: string };

/** Our binary for this Node, verified against its manifest; or why there is none. Nothing is loaded here. */
export function locateSourceBuild(): LocatedSourceBuild {
  const stem = sourceBuildStem();
  const binary = join(sourceBuildDir(), `${stem}.node`);
  const manifestPath = join(sourceBuildDir(), `${stem}.json`);
  if (!existsSync(binary) || !existsSync(manifestPath)) {
    return { reason: `not built for Node ABI ${process.versions.modules} (make build compiles it where a C++ compiler and Node's headers are present)` };
  }
  let manifest: SourceBuildManifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as SourceBuildManifest;
  } catch (error) {
    return { reason: `${manifestPath} is not valid JSON: ${(error as Error).message}` };
  }
  if (manifest.nodeAbi !== process.versions.modules) return { reason: `${manifestPath} is for ABI ${manifest.nodeAbi}, not ${process.versions.modules}` };
  const actual = sha256File(binary);
  if (actual !== manifest.binarySha256) return { reason: `${binary} has sha256 ${actual.slice(0, 12)}…, not the ${manifest.binarySha256.slice(0, 12)}… its manifest names (rebuild: make build)` };
  return { path: binary, manifest };
}
