// Thread 0's end of a QUIC link (src/egress/quic/quic-link.ts) against an owner played by this test over the real shared
// rings, and the routing of targets to their owners (src/egress/quic/connections.ts, src/egress/quic/shard-owner.ts).
import { afterEach, describe, expect, it } from 'vitest';
import type { ConnectionCache } from '../../../src/egress/quic/connection-cache.js';
import type { TargetSender } from '../../../src/egress/quic/connections.js';
import { ShardedConnections } from '../../../src/egress/quic/sharded-connections.js';
import { QuicLinkEnd } from '../../../src/egress/quic/quic-link.js';
import { quicThreadOf } from '../../../src/egress/quic/shard-owner.js';
import { createLogger } from '../../../src/log/logger.js';
import { MessageRingConsumer, MessageRingProducer, createMessageRing } from '../../../src/shm/message-ring.js';
import { QUIC_LINK_ANSWERS, QUIC_LINK_KINDS, linkHeaderOf, publishLinkAnswer, quicLinkPayloadBytes, type QuicLink } from '../../../src/shm/quic-link-layout.js';

const log = createLogger('silent', 'test');
const links: QuicLinkEnd[] = [];

function makeLink(slots = 16): { link: QuicLink; owner: { requests: MessageRingConsumer; answers: MessageRingProducer } } {
  const link = { requests: createMessageRing(slots, quicLinkPayloadBytes(1232)), answers: createMessageRing(slots, 0) };
  return { link, owner: { requests: new MessageRingConsumer(link.requests), answers: new MessageRingProducer(link.answers) } };
}

function end(link: QuicLink, o: { answerGraceMs?: number; sweepMs?: number } = {}): QuicLinkEnd {
  const e = new QuicLinkEnd(link, { thread: 1, staleAfterMs: 0, log, ...o });
  links.push(e);
  return e;
}

afterEach(async () => {
  await Promise.all(links.splice(0).map((l) => l.close()));
});

describe('QUIC link, thread 0 end', () => {
  it('hands the transaction, target and label to the owner, and settles with the owner\'s answer', async () => {
    const { link, owner } = makeLink();
    const e = end(link);
    const tx = Uint8Array.from({ length: 300 }, (_, i) => i & 0xff);
    const t = e.target('10.0.0.7:8009', 'Validator1111');
    const p = t.send(tx);
    expect(p).toBeInstanceOf(Promise);
    tx.fill(0); // the caller may reuse its bytes at once: the link copied them
    expect(owner.requests.take()).toBe(true);
    const h = linkHeaderOf(owner.requests.header);
    expect(h.kind).toBe(QUIC_LINK_KINDS.send);
    const body = owner.requests.payload();
    expect(body.length).toBe(h.txBytes + h.targetBytes + h.labelBytes);
    expect([...body.subarray(0, h.txBytes)]).toEqual(Array.from({ length: 300 }, (_, i) => i & 0xff));
    expect(body.toString('latin1', h.txBytes, h.txBytes + h.targetBytes)).toBe('10.0.0.7:8009');
    expect(body.toString('latin1', h.txBytes + h.targetBytes, h.txBytes + h.targetBytes + h.labelBytes)).toBe('Validator1111');
    const id = h.requestId;
    owner.requests.release();
    expect(owner.answers.reserve()).toBeGreaterThanOrEqual(0);
    publishLinkAnswer(owner.answers, id, QUIC_LINK_ANSWERS.indexOf('dropped:stale'));
    expect(await p).toBe('dropped:stale');
    expect(e.inFlight).toBe(0);
    // One sender object per target.
    expect(e.target('10.0.0.7:8009', 'Validator1111')).toBe(t);
    expect(h.background).toBe(false);
    // A rebroadcast says so: the owner's connection writes it after its first sends.
    const again = t.send(tx, true);
    expect(owner.requests.take()).toBe(true);
    expect(linkHeaderOf(owner.requests.header).background).toBe(true);
    const againId = linkHeaderOf(owner.requests.header).requestId;
    owner.requests.release();
    expect(owner.answers.reserve()).toBeGreaterThanOrEqual(0);
    publishLinkAnswer(owner.answers, againId, QUIC_LINK_ANSWERS.indexOf('sent'));
    expect(await again).toBe('sent');
  });

  it('answers dropped:queue_full at once when the owner is behind (its request ring is full)', () => {
    const { link } = makeLink(4);
    const e = end(link);
    const t = e.target('10.0.0.7:8009', undefined);
    const answers = Array.from({ length: 6 }, () => t.send(new Uint8Array(10)));
    expect(answers.slice(0, 4).every((a) => a instanceof Promise)).toBe(true);
    expect(answers.slice(4)).toEqual(['dropped:queue_full', 'dropped:queue_full']);
  });

  it('an owner that never answers (its thread died): failed once the answer is overdue, never a hang', async () => {
    const { link } = makeLink();
    const e = end(link, { answerGraceMs: 50, sweepMs: 20 });
    const t0 = Date.now();
    const o = await e.target('10.0.0.7:8009', undefined).send(new Uint8Array(10));
    expect(o).toBe('failed');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
    expect(e.inFlight).toBe(0);
  });

  it('close(): every open request answers failed, later sends too', async () => {
    const { link } = makeLink();
    const e = end(link);
    const t = e.target('10.0.0.7:8009', undefined);
    const p = t.send(new Uint8Array(10));
    await e.close();
    expect(await p).toBe('failed');
    expect(t.send(new Uint8Array(10))).toBe('failed');
  });

  it('a thread 0 restarted on the same rings: its requests get its own answers, not late ones to its predecessor\'s', async () => {
    const { link, owner } = makeLink();
    const before = end(link);
    void before.target('10.0.0.7:8009', undefined).send(new Uint8Array(10));
    expect(owner.requests.take()).toBe(true);
    const oldId = linkHeaderOf(owner.requests.header).requestId;
    owner.requests.release();
    await before.close(); // the crash: its routes closed, its requests answered failed
    await new Promise((r) => setTimeout(r, 2)); // the next end starts later (its numbers start at its start time)
    const after = end(link);
    const p = after.target('10.0.0.7:8009', undefined).send(new Uint8Array(10));
    expect(owner.requests.take()).toBe(true);
    const newId = linkHeaderOf(owner.requests.header).requestId;
    owner.requests.release();
    expect(newId).not.toBe(oldId);
    // The owner answers the old request late (sent), then the new one (stale): the new end takes only its own.
    for (const [id, o] of [[oldId, 'sent'], [newId, 'dropped:stale']] as const) {
      expect(owner.answers.reserve()).toBeGreaterThanOrEqual(0);
      publishLinkAnswer(owner.answers, id, QUIC_LINK_ANSWERS.indexOf(o));
    }
    expect(await p).toBe('dropped:stale');
  });

  it('a pre-warm set longer than a slot goes in parts; the last one is marked', () => {
    const { link, owner } = makeLink();
    const e = end(link);
    const set = Array.from({ length: 60 }, (_, i) => ({ target: `10.0.${i}.1:8009`, label: `Validator${'x'.repeat(30)}${i}` }));
    e.prewarm(set);
    let text = '';
    const lasts: number[] = [];
    const h = linkHeaderOf(owner.requests.header);
    while (owner.requests.take()) {
      expect(owner.requests.header.kind).toBe(QUIC_LINK_KINDS.prewarm);
      text += owner.requests.payload().toString('latin1');
      lasts.push(h.lastPart ? 1 : 0);
      owner.requests.release();
    }
    expect(lasts.length).toBeGreaterThan(1);
    expect(lasts.slice(0, -1).every((l) => l === 0)).toBe(true);
    expect(lasts.at(-1)).toBe(1);
    expect(text.split('\n').filter((l) => l.length > 0)).toEqual(set.map((t) => `${t.target} ${t.label}`));
  });
});

describe('targets spread over QUIC threads', () => {
  it('quicThreadOf: stable, in range, and spreads addresses', () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 3_000; i++) {
      const addr = `10.${i >> 8}.${i & 0xff}.1:${8000 + (i % 7)}`;
      const t = quicThreadOf(addr, 3);
      expect(quicThreadOf(addr, 3)).toBe(t);
      counts[t]++;
    }
    for (const c of counts) expect(c).toBeGreaterThan(800);
    expect(quicThreadOf('10.0.0.1:8009', 1)).toBe(0);
  });

  it('ShardedConnections: thread 0 targets from its cache, the others through their link; pre-warm split by owner', () => {
    const got: string[] = [];
    const warmed: string[][] = [];
    const local = {
      get: (t: string): TargetSender => {
        got.push(t);
        return { send: () => 'sent', firstAttempt: Promise.resolve(true) };
      },
      pin: (t: string): TargetSender => {
        got.push(`pin ${t}`);
        return { send: () => 'sent', firstAttempt: Promise.resolve(true) };
      },
      prewarm: (ts: readonly { target: string }[]) => warmed.push(ts.map((t) => t.target)),
    } as unknown as ConnectionCache;
    const { link, owner } = makeLink(64);
    const e = end(link);
    const c = new ShardedConnections(local, [e]);
    const addrs = Array.from({ length: 20 }, (_, i) => `127.0.0.1:${9000 + i}`);
    const mine = addrs.filter((a) => quicThreadOf(a, 2) === 0);
    const theirs = addrs.filter((a) => quicThreadOf(a, 2) === 1);
    expect(mine.length).toBeGreaterThan(0);
    expect(theirs.length).toBeGreaterThan(0);
    for (const a of addrs) c.get(a, 'x');
    expect(got).toEqual(mine);
    for (const a of theirs) expect(c.get(a, 'x')).toBe(e.target(a, 'x'));
    c.pin(theirs[0], 'static');
    expect(got).toEqual(mine); // the owner pins its own peers itself
    c.prewarm(addrs.map((target) => ({ target })));
    expect(warmed).toEqual([mine]);
    expect(owner.requests.take()).toBe(true);
    expect(owner.requests.payload().toString('latin1').split('\n').filter(Boolean).map((l) => l.split(' ')[0])).toEqual(theirs);
  });
});
