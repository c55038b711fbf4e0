// The shared submit budgets (src/shm/budget-layout.ts): the same arithmetic as the private TokenBucket (grant, the wait
// until enough tokens, refund, a reload's carry-over), a cluster budget still deciding first, and two threads taking
// from one bucket at once granting exactly its tokens (the compare-exchange lock). The second thread runs the compiled
// module (dist/), as the QUIC thread does.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { BudgetTable, createBudgetBuffer } from '../../../src/shm/budget-layout.js';
import { TokenBucket, type SharedBudget } from '../../../src/admission/rate-limit.js';
import { distUrl, ensureDist } from '../../integration/egress/dist-build.js';

describe('shared submit budgets', () => {
  it('a bucket in shared memory grants, refuses and refunds as a private one does', () => {
    const table = new BudgetTable(createBudgetBuffer(8, 8));
    const shared = new TokenBucket(10, 3, 0, table);
    const local = new TokenBucket(10, 3, 0);
    expect(shared.slot).toBe(0);
    expect(local.slot).toBe(-1);
    for (const t of [0, 0, 0, 0, 50, 100, 100, 250]) expect(shared.take(1, t)).toBe(local.take(1, t));
    shared.refund(1);
    local.refund(1);
    expect(shared.take(2, 250)).toBe(local.take(2, 250));
    // What the other thread sees: the same slot.
    expect(new BudgetTable(table.sab).take(shared.slot, 1, 250)).toBe(local.take(1, 250));
  });

  it('a reload carries the tokens left into the new bucket (at most its burst)', () => {
    const table = new BudgetTable(createBudgetBuffer(8, 8));
    const old = new TokenBucket(1, 10, 0, table);
    expect(old.take(8, 0)).toBe(0); // 2 left
    const next = new TokenBucket(1, 5, 0, table);
    next.carryFrom(old, 1000); // 3 left by then
    expect(next.take(3, 1000)).toBe(0);
    expect(next.take(1, 1000)).toBeGreaterThan(0);
  });

  it('an active cluster budget decides first, as for a private bucket', () => {
    const table = new BudgetTable(createBudgetBuffer(8, 8));
    const b = new TokenBucket(1, 1, 0, table);
    const calls: string[] = [];
    const cluster: SharedBudget = { active: true, take: () => (calls.push('take'), 0), refund: () => void calls.push('refund') };
    b.shared = cluster;
    expect(b.take(5, 0)).toBe(0);
    b.refund(5);
    expect(calls).toEqual(['take', 'refund']);
    expect(table.tokens(b.slot)).toBe(1); // untouched
  });

  it('two threads taking from one bucket at once are granted exactly its tokens', async () => {
    ensureDist();
    const N = 200_000;
    const table = new BudgetTable(createBudgetBuffer(4, 4));
    // No refill (perSecond ~0): every grant spends one of the N tokens.
    const slot = table.allocate(1e-9, N, 0);
    const code = `
      const { workerData, parentPort } = require('node:worker_threads');
      import(workerData.url).then(({ BudgetTable }) => {
        const t = new BudgetTable(workerData.sab);
        let granted = 0;
        for (let i = 0; i < workerData.n; i++) if (t.take(workerData.slot, 1, 0) === 0) granted++;
        parentPort.postMessage(granted);
      });`;
    const other = new Worker(code, { eval: true, workerData: { url: distUrl('src/shm/budget-layout.js'), sab: table.sab, slot, n: N } });
    const theirs = new Promise<number>((resolve, reject) => {
      other.once('message', resolve);
      other.once('error', reject);
    });
    let mine = 0;
    for (let i = 0; i < N; i++) if (table.take(slot, 1, 0) === 0) mine++;
    const total = mine + (await theirs);
    await other.terminate();
    expect(total).toBe(N);
    expect(table.tokens(slot)).toBeLessThan(1);
  }, 30_000);
});
