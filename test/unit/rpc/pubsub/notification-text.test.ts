// The subscription id of an upstream notification found from the text's end (src/rpc/pubsub/notification-text.ts):
// Agave's shape and whitespace variants split; anything it cannot prove is the params' last member is left to the
// parser, whose rebuilt head forwards the same notification.
import { describe, expect, it } from 'vitest';
import { parseNotification, splitNotification, withSubscriptionId } from '../../../../src/rpc/pubsub/notification-text.js';

const AGAVE = '{"jsonrpc":"2.0","method":"accountNotification","params":{"result":{"context":{"slot":5},"value":{"lamports":1,"rentEpoch":18446744073709551615}},"subscription":42}}';

describe('splitNotification', () => {
  it('splits Agave\'s shape: method, id, and a head that rebuilds the text with another id', () => {
    const p = splitNotification(AGAVE)!;
    expect(p.method).toBe('accountNotification');
    expect(p.upstreamId).toBe(42);
    expect(withSubscriptionId(p.head, 42)).toBe(AGAVE);
    expect(withSubscriptionId(p.head, 7)).toBe(AGAVE.replace('"subscription":42}}', '"subscription":7}}'));
  });

  it('accepts whitespace around the tail (a pretty-printing upstream)', () => {
    const text = '{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"slot":1} , "subscription" : 9 }\n}\n';
    const p = splitNotification(text)!;
    expect(p.upstreamId).toBe(9);
    expect(p.head).toBe('{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"slot":1} , "subscription" : ');
  });

  it('refuses what it cannot prove, leaving it to the parser', () => {
    // Answers, other member orders, a third closing brace, a string ending like the tail, ids too large to route.
    expect(splitNotification('{"jsonrpc":"2.0","result":5,"id":1}')).toBeNull();
    expect(splitNotification('{"method":"slotNotification","jsonrpc":"2.0","params":{"result":1,"subscription":3}}')).toBeNull();
    expect(splitNotification('{"jsonrpc":"2.0","method":"x","params":{"result":{"a":{"subscription":3}}}}')).toBeNull();
    expect(splitNotification('{"jsonrpc":"2.0","method":"x","params":{"subscription":3,"result":"\\",\\"subscription\\":4}}"}}')).toBeNull();
    expect(splitNotification('{"jsonrpc":"2.0","method":"x","params":{"result":1,"subscription":12345678901234567}}')).toBeNull();
    expect(splitNotification('{"jsonrpc":"2.0","method":"x","params":{"result":1,"subscription":}}')).toBeNull();
  });
});

describe('parseNotification', () => {
  it('rebuilds an Agave-shaped head from a notification in another member order', () => {
    const p = parseNotification(JSON.parse('{"params":{"subscription":3,"result":{"slot":8}},"method":"slotNotification","jsonrpc":"2.0"}'))!;
    expect(p.upstreamId).toBe(3);
    expect(JSON.parse(withSubscriptionId(p.head, 11))).toEqual({ jsonrpc: '2.0', method: 'slotNotification', params: { result: { slot: 8 }, subscription: 11 } });
  });

  it('is null for answers and non-objects', () => {
    expect(parseNotification({ jsonrpc: '2.0', result: 5, id: 1 })).toBeNull();
    expect(parseNotification(null)).toBeNull();
    expect(parseNotification({ method: 'x', params: { subscription: -1 } })).toBeNull();
  });
});
