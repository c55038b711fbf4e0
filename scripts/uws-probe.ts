// Prints which uWS build the relay would run on under this Node on this host (cold; `node dist/scripts/uws-probe.js`),
// or why none loads (exit 1). Used by `make test-node24` / .ci/run to say so instead of failing (docs/http-runtime.md).
import { describeBuild, loadUws, NoUwsBuildError } from '../src/native/uws.js';

try {
  const r = loadUws();
  const passed = r.passedOver.map((p) => `; passed over ${p.id}: ${p.reason}`).join('');
  process.stdout.write(`Node ${process.versions.node}: ${describeBuild(r.build)}${passed}\n`);
} catch (err) {
  process.stdout.write(err instanceof NoUwsBuildError ? `${err.message}\n` : `${String(err)}\n`);
  process.exitCode = 1;
}
