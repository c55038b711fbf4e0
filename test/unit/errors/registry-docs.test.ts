import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Errors } from '../../../src/errors/registry.js';
import { renderErrorsTable } from '../../../src/errors/render-doc.js';

describe('error registry', () => {
  it('docs/errors.md carries exactly the registry table', () => {
    expect(readFileSync('docs/errors.md', 'utf8')).toContain(renderErrorsTable());
  });
  it('uses only JSON-RPC codes @solana/kit can decode', () => {
    for (const e of Object.values(Errors)) {
      const ok = e.rpcCode === -32700 || (e.rpcCode <= -32600 && e.rpcCode >= -32603) || (e.rpcCode <= -32001 && e.rpcCode >= -32021);
      expect(ok, `${e.reason} uses ${e.rpcCode}`).toBe(true);
    }
  });
  it('has unique ids and reasons; retryable errors are the ones answered with Retry-After', () => {
    const all = Object.values(Errors);
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    expect(new Set(all.map((e) => e.reason)).size).toBe(all.length);
    for (const e of all) if (e.retryable) expect([200, 429, 503]).toContain(e.rpcHttpStatus);
  });
});
