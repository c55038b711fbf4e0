// `--config` naming a file that cannot be read (issue 47, item 5). Before: `start` and `doctor` exited 1 with Node's
// ENOENT / EISDIR stack trace; the docs (README, docs/doctor.md) say bad configuration exits 2 with a message. Shown on
// the real CLI: a missing file, a directory, and a config whose keysFile is missing each exit 2 with one line naming
// the file and what is wrong, no stack, and `start` never reports ready. Needs the build (dist/). ~5 s.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureDistFresh } from '../../unit/telemetry/dist-fresh.js';

const dir = mkdtempSync(join(tmpdir(), 'slotrelay-config-unreadable-'));

function cli(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['dist/src/cli.js', ...args], { encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function expectBadConfig(r: { status: number | null; stdout: string; stderr: string }, line: string): void {
  expect(r.status, r.stderr).toBe(2);
  expect(r.stderr).toBe(`slotrelay: ${line}\n`); // one line: no stack trace
  expect(r.stdout).not.toContain('relay_ready');
}

describe('--config naming a file that cannot be read: exit 2 with a message', () => {
  beforeAll(() => ensureDistFresh());
  const missing = join(dir, 'no-such.yaml');

  for (const cmd of ['start', 'doctor'] as const) {
    it(`${cmd} --config with a missing file`, () => {
      expectBadConfig(cli([cmd, '--config', missing]), `cannot read ${missing}: no such file`);
    });

    it(`${cmd} --config with a directory`, () => {
      expectBadConfig(cli([cmd, '--config', dir]), `cannot read ${dir}: a directory, not a file`);
    });
  }

  it('start with a config whose keysFile is missing: the keys file named', () => {
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'upstream: { rpcUrl: "http://127.0.0.1:9" }\nkeysFile: keys.yaml\n');
    expectBadConfig(cli(['start', '--config', file]), `cannot read ${join(dir, 'keys.yaml')}: no such file`);
  });
});
