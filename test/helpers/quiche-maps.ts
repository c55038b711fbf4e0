// Which quiche binding files a process maps (/proc/<pid>/maps): the shipped library, the build's per-thread copies
// (dist/native/quiche-threads/), or copies made at run time (under a temp directory, or unlinked: "(deleted)").
import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';

const require = createRequire(import.meta.url);
/** The shipped binary's real path (what /proc/<pid>/maps names when it is loaded as is). */
export const shippedQuiche = realpathSync(require.resolve(`@matrixai/quic-${process.platform}-${process.arch}`));

/** Distinct quiche files mapped by `pid`, and those of them made at run time. */
export function quicheMappings(pid: number): { files: string[]; tempFiles: string[] } {
  const files = new Set<string>();
  for (const line of readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')) {
    const i = line.indexOf('/');
    if (i < 0) continue;
    const path = line.slice(i);
    // Private copies (src/native/private-addon.ts) are <dir>/.slotrelay-quiche-<pid>-<thread>-*/quiche.node, unlinked
    // once mapped ("(deleted)"), in the temp directory or next to the package; build copies are quiche-<k>.node.
    if (path.includes('napi.node') || (path.includes('.node') && path.includes('quic'))) files.add(path);
  }
  const tmp = realpathSync(tmpdir());
  const isBuildCopy = (f: string): boolean => f.includes('/dist/native/quiche-threads/') && !f.endsWith('(deleted)');
  // The shipped file and the build's copies are not run-time copies, wherever the checkout is (CI clones may live under /tmp).
  return {
    files: [...files],
    tempFiles: [...files].filter((f) => f !== shippedQuiche && !isBuildCopy(f) && (f.startsWith(tmp) || f.startsWith('/tmp/') || f.endsWith('(deleted)'))),
  };
}
