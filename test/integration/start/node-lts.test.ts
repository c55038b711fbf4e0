// Node's LTS lines (issue #47 item 7): which Node `make` runs the relay on, and what CI does on a line where no uWS
// build loads. Shown with the real Makefile and real Node binaries: `make start` with a Node older than package.json
// `engines` first in PATH (this machine's Node 20, else Node 20 from the registry) serves on a supported Node the
// project installed (scripts/select-node.sh), never on the old one; `make test` on Node 26 (as .ci/run runs it) stops, failing and saying why,
// when no uWS build loads on Node 26 instead of passing; and every locked dependency admits every Node that
// `engines` admits (a fresh `npm ci` on a supported Node warns about none but the legacy uWS build, named below).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startFakeRpcUpstream, type FakeRpcUpstream } from '../../helpers/fake-upstream.js';
import { TEST_KEY } from '../../helpers/relay-process.js';

const semver = createRequire(import.meta.url)('semver') as {
  subset(sub: string, sup: string): boolean;
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };

/** What make sees of the environment: no MAKEFLAGS / NODE_MAJOR from a `make test` this suite may run under. */
function makeEnv(path: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: path, HOME: process.env.HOME ?? '/root', ...extra };
  for (const k of ['XDG_CACHE_HOME', 'SLOTRELAY_NODE_CACHE', 'SLOTRELAY_UWS_CACHE']) if (process.env[k] !== undefined) env[k] = process.env[k];
  return env;
}

/** A Node older than `engines` admits: this machine's /usr/bin/node when it is one, else Node 20 from the registry. */
function oldNodeDir(): string {
  const machine = spawnSync('/usr/bin/node', ['-p', 'process.versions.node'], { encoding: 'utf8' });
  if (machine.status === 0 && !semver.satisfies(machine.stdout.trim(), pkg.engines.node)) return '/usr/bin';
  const r = spawnSync('bash', ['scripts/ci/install-node.sh', '20'], { encoding: 'utf8', timeout: 240_000 });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
}

describe('the Node the project runs on', () => {
  let upstream: FakeRpcUpstream | undefined;
  let make: ChildProcess | undefined;
  afterAll(async () => {
    // make and the relay it started are one process group (detached below): end exactly that group.
    if (make?.pid !== undefined && make.exitCode === null) {
      const closed = new Promise((r) => make!.once('close', r));
      process.kill(-make.pid, 'SIGTERM');
      await closed;
    }
    await upstream?.close();
  });

  it('package.json engines admits 22.13+, 24 and 26, not 20, and every locked dependency admits all of them', () => {
    const range = pkg.engines.node;
    for (const v of ['22.13.0', '22.23.3', '24.0.0', '24.22.3', '26.0.0', '26.12.1']) expect(semver.satisfies(v, range), v).toBe(true);
    for (const v of ['20.10.0', '20.20.2', '22.12.0', '23.0.0', '25.0.0']) expect(semver.satisfies(v, range), v).toBe(false);
    // The one exception, named: the legacy uWS build (@rjweb/uws 1.5.0, installed as uWebSockets.js: Node 16-20) is
    // kept for the typings the code compiles against and loads on no supported Node (docs/http-runtime.md); npm warns
    // about it alone. Replacing it is its own change.
    expect(lock.packages['node_modules/uWebSockets.js']?.engines).toEqual({ node: '16.x || 18.x || 20.x' });
    const refuse = Object.entries(lock.packages).flatMap(([path, p]) => {
      const node = Array.isArray(p.engines) ? undefined : p.engines?.node;
      if (path === '' || path === 'node_modules/uWebSockets.js' || node === undefined || semver.subset(range, node)) return [];
      return [`${path.replace(/^.*node_modules\//, '')}@${p.version ?? '?'} wants node ${node}`];
    });
    expect(refuse).toEqual([]);
  });

  it('make start with a Node older than engines first in PATH serves on a supported Node the project installed', { timeout: 300_000 }, async () => {
    const old = oldNodeDir();
    const oldVersion = spawnSync(join(old, 'node'), ['--version'], { encoding: 'utf8' }).stdout.trim();
    const path = `${old}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`;
    // dist/ holds our uWS for the Node this suite runs on (CI: 24, then 26), not necessarily for the Node make picks
    // here: its build step is run for that Node first (cached after the first time; a compile otherwise), alone,
    // since `make build` would also recompile dist/ under the files running beside this one.
    const picked = spawnSync('bash', ['scripts/select-node.sh'], { encoding: 'utf8', timeout: 240_000, env: makeEnv(path) });
    expect(picked.status, picked.stderr).toBe(0);
    const built = spawnSync(join(picked.stdout.trim(), 'node'), ['dist/scripts/uws-build.js'], { encoding: 'utf8', timeout: 240_000, env: makeEnv(path) });
    expect(built.status, built.stdout + built.stderr).toBe(0);
    upstream = await startFakeRpcUpstream();
    const file = join(mkdtempSync(join(tmpdir(), 'slotrelay-node-lts-')), 'config.yaml');
    writeFileSync(
      file,
      stringify({
        rpcHost: { host: '127.0.0.1', port: 0 },
        relayHost: { host: '127.0.0.1', port: 0, quicPort: 0 },
        admin: { port: 0 },
        telemetry: { enabled: false },
        upstream: { rpcUrl: upstream.url },
        routes: { rpc: { endpoints: [upstream.url] } },
        keys: [{ key: TEST_KEY, name: 'test-bot' }],
      }),
    );
    // `-o build`: dist/ is built already (the suite runs from it); what is checked is the Node make picks to run it.
    make = spawn('make', ['-o', 'build', 'start', `CONFIG=${file}`], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: makeEnv(path),
    });
    const out: string[] = [];
    createInterface({ input: make.stderr! }).on('line', (l) => out.push(l));
    const ready = await new Promise<{ http: { node: string }; listeners: { name: string; port: number }[] }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no relay_ready in 60 s:\n${out.join('\n')}`)), 60_000);
      make!.once('exit', (code) => reject(new Error(`make exited ${String(code)}:\n${out.join('\n')}`)));
      createInterface({ input: make!.stdout! }).on('line', (l) => {
        out.push(l);
        if (!l.includes('"relay_ready"')) return;
        clearTimeout(timer);
        resolve(JSON.parse(l) as { http: { node: string }; listeners: { name: string; port: number }[] });
      });
    });
    // The relay runs on a Node engines admits, and says so; make said why it passed over the old one.
    expect(semver.satisfies(ready.http.node, pkg.engines.node), `relay on Node ${ready.http.node}`).toBe(true);
    expect(`v${ready.http.node}`).not.toBe(oldVersion);
    const said = out.find((l) => l.startsWith('select-node:'));
    expect(said, out.join('\n')).toContain(`Node ${oldVersion.slice(1)} on PATH is not one slotrelay supports`);
    expect(said).toContain(`using Node ${ready.http.node.split('.')[0]} from`);
    const rpc = ready.listeners.find((l) => l.name === 'rpc')!;
    const health = await fetch(`http://127.0.0.1:${rpc.port}/health`);
    expect(health.status).toBe(200);
  });

  it('make test on Node 26 (what .ci/run and test-node26 run) fails, saying why, where no uWS build loads on it (the suite is not run)', () => {
    // The prebuilt upstream build has no Node 26 binary: restricted to it, nothing loads, as on a host where our build
    // could not be made. .ci/run runs `make test NODE_MAJOR=26`; that is run here with `-o build` (dist/ is built
    // already; make does not pass -o down to a sub-make, so not through test-node26 itself).
    expect(readFileSync('.ci/run', 'utf8')).toMatch(/^\s*make test NODE_MAJOR="\$major"/m);
    const r = spawnSync('make', ['-o', 'build', 'test', 'NODE_MAJOR=26'], {
      encoding: 'utf8',
      timeout: 240_000,
      env: makeEnv(`${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, { SLOTRELAY_UWS_BUILD: 'maintained' }),
    });
    const text = r.stdout + r.stderr;
    expect(r.status, text).not.toBe(0);
    expect(text).toMatch(/Node 26\.\d+\.\d+: no uWS build loads on this host, so the suite cannot run on it/);
    expect(text).toMatch(/no uWebSockets\.js build loads on Node 26\.\d+\.\d+ \(ABI \d+/);
    expect(text).not.toContain('vitest');
    const recipe = spawnSync('make', ['-n', 'test-node26'], { encoding: 'utf8', env: makeEnv(`${dirname(process.execPath)}:/usr/bin:/bin`) });
    expect(recipe.stdout).toMatch(/make.* test NODE_MAJOR=26/);
  });
});
