// The client keeps its own copies of a few server facts (it may not import the server): route names, the
// getLeaderSlots error codes and reasons, the receipt's shape. This test holds them to the server's tables, so they
// cannot drift apart (the receipt's by type: `npx tsc -p tsconfig.test.json` fails when they differ).
import { describe, expect, it } from 'vitest';
import { CLIENT_REASONS, ROUTE_NAMES, submitUrlOf, type ReceiptExecution, type TransactionReceipt } from 'slotrelay/client';
import type { Execution } from '../../../src/receipts/execution-outcome.js';
import type { ReceiptJson } from '../../../src/receipts/receipt-table.js';
import { ROUTE_NAMES as SERVER_ROUTE_NAMES } from '../../../src/config/schema.js';
import { Errors } from '../../../src/errors/registry.js';
import {
  LEADER_RANGE_NOT_COVERED,
  LEADER_SNAPSHOT_MISSING,
  LEADER_SNAPSHOT_STALE,
  LEADER_SNAPSHOT_UNSUPPORTED_SCHEMA,
} from '../../../src/client/leader-slots.js';

// Both directions: a server receipt is a client TransactionReceipt, and the execution values are the same set.
const receiptToClient: (r: ReceiptJson) => TransactionReceipt = (r) => r;
const executionBothWays: [(e: Execution) => ReceiptExecution, (e: ReceiptExecution) => Execution] = [(e) => e, (e) => e];
void receiptToClient;
void executionBothWays;

describe('client facts match the server tables', () => {
  it('route names', () => {
    expect([...ROUTE_NAMES]).toEqual([...SERVER_ROUTE_NAMES]);
  });

  it('getLeaderSlots error codes (docs/get-leader-slots.md)', () => {
    expect(LEADER_SNAPSHOT_MISSING).toBe(Errors.LEADER_SNAPSHOT_MISSING.rpcCode);
    expect(LEADER_SNAPSHOT_STALE).toBe(Errors.LEADER_SNAPSHOT_STALE.rpcCode);
    expect(LEADER_RANGE_NOT_COVERED).toBe(Errors.LEADER_RANGE_NOT_COVERED.rpcCode);
    expect(LEADER_SNAPSHOT_UNSUPPORTED_SCHEMA).toBe(Errors.LEADER_SNAPSHOT_UNSUPPORTED_SCHEMA.rpcCode);
  });

  it("the client's own reasons never reuse a relay reason (a reason says who decided)", () => {
    const relay = new Set(Object.values(Errors).map((e) => e.reason));
    expect(CLIENT_REASONS.filter((r) => relay.has(r))).toEqual([]);
  });

  it('submitUrlOf: base URL or full submit URL, path prefixes kept', () => {
    expect(submitUrlOf('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/v1/submit');
    expect(submitUrlOf('http://127.0.0.1:8080/')).toBe('http://127.0.0.1:8080/v1/submit');
    expect(submitUrlOf('http://127.0.0.1:8080/v1/submit')).toBe('http://127.0.0.1:8080/v1/submit');
    expect(submitUrlOf('https://relay.example/fra/')).toBe('https://relay.example/fra/v1/submit');
    expect(() => submitUrlOf('127.0.0.1:8080')).toThrow(TypeError);
    expect(() => submitUrlOf('ftp://x/')).toThrow(/http\(s\)/);
  });
});
