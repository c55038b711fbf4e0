// Parse failures and schema issues name the place and the cause, never the text (src/config/parse-failure.ts,
// issue-text.ts; issue #47 item 1). The texts hold a key where each parser quotes its input.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { issueText } from '../../../src/config/issue-text.js';
import { ParseFailure, parseStructuredText } from '../../../src/config/parse-failure.js';

const KEY = '3e8b5d1f-7a2c-4f9e-b6d0-1c4a7e2b9f53';

function failure(text: string, format: 'yaml' | 'json'): ParseFailure {
  try {
    parseStructuredText(text, format);
  } catch (err) {
    if (err instanceof ParseFailure) return err;
    throw err;
  }
  throw new Error('parsed');
}

describe('parseStructuredText', () => {
  it('YAML: line, column and cause, no excerpt', () => {
    const f = failure(`a: 1\n- key: ${KEY}  name: {\n`, 'yaml');
    expect(f.message).not.toContain(KEY.slice(0, 8));
    expect(f.line).toBe(2);
    expect(f.message).toMatch(/^line 2, column \d+: /);
  });

  it('JSON: every V8 wording mapped to a position, none quoting the text', () => {
    for (const text of [`{"key": "${KEY}" x}`, `{"key": "${KEY}`, `{"key": "${KEY}"}${KEY}`, `[${KEY}]`, `\n\n{"key": ${KEY}}`]) {
      const f = failure(text, 'json');
      expect(f.message, text).not.toContain(KEY.slice(0, 8));
      expect(f.message, text).not.toContain(KEY.slice(-8));
      expect(f.line, text).not.toBeNull();
    }
    expect(failure(`\n\n{"key": ${KEY}}`, 'json').line).toBe(3);
  });

  it('parses what is valid', () => {
    expect(parseStructuredText('- key: x\n', 'yaml')).toEqual([{ key: 'x' }]);
    expect(parseStructuredText('{"a":[1]}', 'json')).toEqual({ a: [1] });
  });
});

describe('issueText', () => {
  const schema = z.array(z.object({ route: z.enum(['rpc', 'direct']).optional(), m: z.record(z.number()).optional() }).strict());

  it('an enum names its options, not the value received', () => {
    const r = schema.safeParse([{ route: KEY }]);
    expect(r.success).toBe(false);
    const text = r.success ? '' : r.error.issues.map(issueText).join('\n');
    expect(text).toBe('0.route: expected one of rpc, direct');
  });

  it('an unknown key shaped like a key or token is counted, not shown; a field-like one is named', () => {
    const r = schema.safeParse([{ [KEY]: 1, colour: 2, deadbeef01: 3 }]);
    const text = r.success ? '' : r.error.issues.map(issueText).join('\n');
    expect(text).toContain('"colour"');
    expect(text).toContain('2 not shown');
    expect(text).not.toContain(KEY.slice(0, 8));
    expect(text).not.toContain('deadbeef');
  });

  it('a path segment from the file that looks like a key is not shown', () => {
    const r = schema.safeParse([{ m: { [KEY]: 'x' } }]);
    const text = r.success ? '' : r.error.issues.map(issueText).join('\n');
    expect(text).toMatch(/^0\.m\.\(a name not shown\): Expected number/);
  });
});
