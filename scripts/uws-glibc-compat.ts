// Build step (cold; `npm run build` / `make build` run it after tsc): writes dist/native/uws-glibc-compat/, the
// maintained uWS build's binaries with their glibc 2.38 imports rebound (src/native/elf-glibc-compat.ts) so they load
// on glibc 2.28-2.37 hosts such as Debian 12. Only the binaries pinned in GLIBC_COMPAT_COPIES are written, each
// checked before (input sha256) and after (output sha256); any mismatch fails the build. Nothing is patched at run
// time: the loader (src/native/uws.ts) only checks the copy's hash and loads it.
// `--print` rewrites every linux binary of the package and prints the hashes to pin (after a package upgrade).
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { rebindGlibc238, sha256 } from '../src/native/elf-glibc-compat.js';
import { glibcCompatDir } from '../src/native/uws.js';
import { GLIBC_COMPAT_COPIES } from '../src/native/uws-builds.js';

const require = createRequire(import.meta.url);

function main(): number {
  let dir: string;
  try {
    dir = dirname(require.resolve('@btc-vision/uwebsockets.js'));
  } catch {
    console.log('uws-glibc-compat: @btc-vision/uwebsockets.js is not installed; no copies made (the legacy build will be used)');
    return 0;
  }
  if (process.argv.includes('--print')) {
    for (const file of readdirSync(dir).filter((f) => /^uws_linux_.*\.node$/.test(f)).sort()) {
      const input = readFileSync(join(dir, file));
      const out = rebindGlibc238(input);
      const key = file.replace(/^uws_/, '').replace(/\.node$/, '').replaceAll('_', '-');
      if (typeof out === 'string') console.log(`${key}: ${out}`);
      else console.log(`  '${key}': { input: '${sha256(input)}', output: '${sha256(out.image)}' }, // ${out.rebound.join(', ')}`);
    }
    return 0;
  }
  const outDir = glibcCompatDir();
  mkdirSync(outDir, { recursive: true });
  let failed = 0;
  for (const [key, pinned] of Object.entries(GLIBC_COMPAT_COPIES)) {
    const file = `uws_${key.replaceAll('-', '_')}.node`;
    const target = join(outDir, file);
    if (existsSync(target) && sha256(readFileSync(target)) === pinned.output) continue; // already built
    const input = readFileSync(join(dir, file));
    const inputSha = sha256(input);
    if (inputSha !== pinned.input) {
      console.error(`uws-glibc-compat: ${file} has sha256 ${inputSha}, not the pinned ${pinned.input}: refusing to rewrite it`);
      failed++;
      continue;
    }
    const out = rebindGlibc238(input);
    if (typeof out === 'string') {
      console.error(`uws-glibc-compat: ${file}: ${out}`);
      failed++;
      continue;
    }
    const outputSha = sha256(out.image);
    if (outputSha !== pinned.output) {
      console.error(`uws-glibc-compat: ${file} rewritten has sha256 ${outputSha}, not the pinned ${pinned.output}`);
      failed++;
      continue;
    }
    writeFileSync(target, out.image, { mode: 0o644 });
    console.log(`uws-glibc-compat: ${file} (${out.rebound.join(', ')})`);
  }
  return failed === 0 ? 0 : 1;
}

process.exitCode = main();
