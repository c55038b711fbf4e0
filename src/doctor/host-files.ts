// Reads the host's kernel and hardware facts for `slotrelay doctor` (cold, CLI only) under one root: "/" on a real
// host; SLOTRELAY_DOCTOR_ROOT=/some/dir makes every /proc and /sys path read under that directory instead (the tests
// point it at a fake tree; an operator can check a saved copy of another host's /proc/sys and /sys files).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export class HostFiles {
  constructor(readonly root: string) {}

  static fromEnv(env: NodeJS.ProcessEnv): HostFiles {
    const r = env.SLOTRELAY_DOCTOR_ROOT;
    return new HostFiles(r === undefined || r === '' ? '/' : r);
  }

  /** The path as read (root-prefixed), for messages. */
  path(p: string): string {
    return join(this.root, p);
  }

  /** The file's text, trimmed; undefined when it does not exist or cannot be read. */
  read(p: string): string | undefined {
    try {
      return readFileSync(this.path(p), 'utf8').trim();
    } catch {
      return undefined;
    }
  }

  /** Entry names of a directory; [] when it does not exist. */
  list(p: string): string[] {
    try {
      return readdirSync(this.path(p));
    } catch {
      return [];
    }
  }
}
