// Doctor check `uws-build` (cold): the uWebSockets.js build `start` will load on this Node and host, loaded here the
// same way (src/native/uws.ts: SLOTRELAY_UWS_BUILD honoured), or why none loads (the relay would exit 1 at start).
import { describeBuild, loadUws, type HttpTimeouts } from '../native/uws.js';
import { fail, pass, type Finding } from './finding.js';

export function checkUws(timeouts: HttpTimeouts): Finding {
  const id = 'uws-build';
  try {
    const r = loadUws(timeouts);
    const passed = r.passedOver.map((p) => `; passed over ${p.id}: ${p.reason}`).join('');
    return pass(id, `Node ${process.versions.node}: ${describeBuild(r.build)}${passed}`, { build: r.build.id, binary: r.build.binary, glibcCompat: r.build.glibcCompat, node: process.versions.node });
  } catch (err) {
    return fail(
      id,
      (err as Error).message,
      'build the checkout on this host with the Node that runs it (make build: compiles our uWS where g++ and Node\'s headers are present, and writes the glibc-compat copy for glibc < 2.38), or run a Node major the prebuilt builds ship for (20, 22, 24: docs/http-runtime.md); leave SLOTRELAY_UWS_BUILD unset',
      { node: process.versions.node },
    );
  }
}
