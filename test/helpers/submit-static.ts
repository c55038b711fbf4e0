// Sends transactions to a relay's static route through /v1/submit, one at a time, each answered 200 (the tests that
// check what a static peer receives: identity, reconnects).
import { expect } from 'vitest';
import { TEST_KEY } from './relay-process.js';
import { legacyTransfer } from './transactions.js';

/** Sends `n` distinct transfers (lamports base, base+1, ...) with routes ['static']; returns their base64 forms. */
export async function submitStatic(relayUrl: string, n: number, base: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const tx = legacyTransfer(base + i);
    const r = await fetch(`${relayUrl}/v1/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
      body: JSON.stringify({ transaction: tx.base64, routes: ['static'], maxRetries: 0 }),
    });
    expect(r.status).toBe(200);
    await r.arrayBuffer();
    out.push(tx.base64);
  }
  return out;
}
