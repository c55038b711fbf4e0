// errorLabel: what an engine error may say in a log line or /health?detail — never a URL or a token-shaped word.
import { describe, expect, test } from 'vitest';
import { errorLabel } from '../../../src/cluster/engine-link.js';

describe('engine error labels', () => {
  test('an error code is the label', () => {
    expect(errorLabel(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:6379'), { code: 'ECONNREFUSED' }))).toBe('ECONNREFUSED');
  });
  test('a server reply quoting a key or a plan keeps its words and loses the key', () => {
    const key = '3f1c2b9a-7d4e-4c1a-9b2f-0e5d6c7a8b9c';
    const label = errorLabel(new Error(`ERR Error running script: user_script:12: bad plan for ${key} {"key":"${key}"}`));
    expect(label).toContain('ERR Error running script');
    for (let i = 0; i + 8 <= key.length; i++) expect(label).not.toContain(key.slice(i, i + 8));
  });
  test('a base58 token and a URL with a password are not shown', () => {
    const token = '5KQwrPbwdL6PhXujxW37FSSQZ1JiwsST4cqQzDeyXtP';
    const label = errorLabel(new Error(`WRONGPASS for rediss://:hunter2secret@engine:6380 token ${token}`));
    expect(label).not.toContain('hunter2');
    expect(label).not.toContain(token.slice(0, 8));
    expect(label).toContain('(url)');
  });
});
