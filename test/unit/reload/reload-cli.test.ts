// `slotrelay reload` without a relay to reload (src/reload/reload-cli.ts): each way of naming no relay gets its own
// message and exit code, and a pid file whose process is gone is called stale. The reload itself, against a real
// relay, is test/integration/reload/reload.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureDistFresh } from '../telemetry/dist-fresh.js';

function reload(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  ensureDistFresh();
  const r = spawnSync(process.execPath, ['dist/src/cli.js', 'reload', ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('slotrelay reload', () => {
  it('bad usage: neither or both of --config and --pid, or a pid that is not one (exit 2)', () => {
    for (const args of [[], ['--config', 'a.yaml', '--pid', '1']]) {
      const r = reload(...args);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('reload needs exactly one of --config FILE');
    }
    expect(reload('--pid', 'abc')).toMatchObject({ status: 2, stderr: 'slotrelay: --pid must be a process id\n' });
  });

  it('no relay started with the config (no pid file), and a stale pid file, exit 1 saying which', () => {
    const dir = mkdtempSync(join(tmpdir(), 'slotrelay-reload-cli-'));
    const config = join(dir, 'config.yaml');
    const none = reload('--config', config);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain(`no relay started with ${config} (no readable ${config}.pid`);
    // A pid no process has (above the kernel's pid_max).
    writeFileSync(`${config}.pid`, '99999999\n');
    const stale = reload('--config', config);
    expect(stale.status).toBe(1);
    expect(stale.stderr).toBe('slotrelay: no process 99999999 (a stale pid file: the relay did not stop cleanly)\n');
  });
});
