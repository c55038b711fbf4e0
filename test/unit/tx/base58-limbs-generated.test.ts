// The base58 encoder's straight-line step is generated ahead of time (scripts/codegen/base58-limbs.ts) so that nothing
// compiles code at run time; the committed file must be exactly the generator's output (an edit by hand, or a change
// to the generator not rerun, fails here).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generate, GENERATED_PATH } from '../../../scripts/codegen/base58-limbs.js';

describe('src/tx/base58-limbs.generated.ts', () => {
  it('is the generator output', () => {
    expect(readFileSync(GENERATED_PATH, 'utf8')).toBe(generate());
  });

  it('nothing under src/ or workers/ builds code at run time', () => {
    // The standard this file exists for: no `new Function` / eval of JavaScript in the relay (Redis' EVAL of Lua is data).
    const r = spawnSync('git', ['grep', '-nE', String.raw`new Function\(|[^.]\beval\(`, '--', 'src', 'workers'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(1); // git grep: 1 = no match
    expect(r.stdout).toBe('');
  });
});
