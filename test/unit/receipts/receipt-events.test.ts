// The receipts table's notification hook (receipt-events.ts): which events each state change gives, in order, and
// that none is given twice. The stream's end-to-end behaviour is test/integration/relay/receipt-stream.test.ts; this
// covers the states a localnet run does not easily reach (not_executed, a status going processed -> confirmed).
import { describe, expect, it } from 'vitest';
import { LANDING, ReceiptTable, type Landing } from '../../../src/receipts/receipt-table.js';
import type { ReceiptEvent } from '../../../src/receipts/receipt-events.js';

const SIG = `S${'1'.repeat(87)}`;

function landing(confirmationStatus: string, execution: Landing['execution'] = 'executed'): Landing {
  return { slot: 10, err: null, confirmationStatus, observedAtMs: 1, leader: 'L', execution, executionSource: 'status' };
}

function observed(): { t: ReceiptTable; seen: ReceiptEvent[] } {
  const t = new ReceiptTable({ capacity: 16, ttlMs: 60_000 });
  const seen: ReceiptEvent[] = [];
  t.observers.push({ receiptChanged: (_seq, e) => void seen.push(e) });
  return { t, seen };
}

describe('receipt table hook', () => {
  it('accepted, processed, confirmed, finalized: each once, as the status moves', () => {
    const { t, seen } = observed();
    const seq = t.accept(SIG, 1, 1, 'r', Date.now(), 5);
    t.setLanded(seq, landing('processed'));
    t.setLanded(seq, landing('processed'));
    t.setLanded(seq, landing('confirmed'));
    t.setLanded(seq, landing('finalized'));
    t.setLanded(seq, landing('finalized'));
    expect(seen).toEqual(['accepted', 'processed', 'confirmed', 'finalized']);
  });

  it('a first status already finalized (Alpenglow, one poll): processed, confirmed, finalized in order', () => {
    const { t, seen } = observed();
    const seq = t.accept(SIG, 1, 1, 'r', Date.now(), 5);
    t.setLanded(seq, landing('finalized'));
    expect(seen).toEqual(['accepted', 'processed', 'confirmed', 'finalized']);
  });

  it('not executed once, when the execution verdict says so (here settled later, by getTransaction)', () => {
    const { t, seen } = observed();
    const seq = t.accept(SIG, 1, 1, 'r', Date.now(), 5);
    t.setLanded(seq, landing('confirmed'));
    t.setLanded(seq, landing('confirmed', 'not_executed'));
    t.setLanded(seq, landing('finalized', 'not_executed'));
    expect(seen).toEqual(['accepted', 'processed', 'confirmed', 'not_executed', 'finalized']);
  });

  it('not landed once; nobody observing: nothing called, nothing kept', () => {
    const { t, seen } = observed();
    const seq = t.accept(SIG, 1, 1, 'r', Date.now(), 5);
    t.setLandingState(seq, LANDING.notLanded);
    t.setLandingState(seq, LANDING.notLanded);
    expect(seen).toEqual(['accepted', 'not_landed']);
    t.observers.length = 0;
    t.setLandingState(t.accept(SIG, 1, 1, 'r', Date.now(), 5), LANDING.notLanded);
    expect(seen).toEqual(['accepted', 'not_landed']);
  });
});
