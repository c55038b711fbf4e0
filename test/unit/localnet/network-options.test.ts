// The localnet network model's pure parts: the relay config's localnet: section (bounds, defaults), its trip to the
// child (--bench-json) and back into LocalnetOptions, and Agave's QoS rules in TpuQos on a controlled clock.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { localnetChildArgs, localnetOptionsFromConfig, parseBenchJson } from '../../../src/localnet/localnet-args.js';
import { parseLocalnetArgs } from '../../../src/localnet/run-localnet.js';
import { TpuQos } from '../../../src/localnet/tpu-qos.js';

const STAKED = '11111111111111111111111111111112';

describe('localnet: config section', () => {
  it('defaults: 4 validators, 250 ms slots, alpenglow, perfect links, QoS off, Agave send-transaction-service figures', () => {
    const c = configSchema.parse({}).localnet;
    expect(c).toMatchObject({ validators: 4, slotMs: 250, consensus: 'alpenglow', finalityDelayMs: 150, links: [], stakedPeers: [] });
    expect(c.rpc).toEqual({ oneWayDelayMs: 0, leaderForwardCount: 2, retryRateMs: 2_000, stakeSol: 0 });
    expect(c.qos).toEqual({
      enabled: false,
      model: 'throttle',
      maxStreamsPerMs: 500,
      baseMaxStreamsStaked: 2048,
      baseMaxStreamsUnstaked: 20,
      maxStakedConnections: 2_000,
      maxUnstakedConnections: 500,
      maxConnectionsPerUnstakedPeer: 8,
      maxConnectionsPerStakedPeer: 16,
      maxConnectionsPerIpPerMinute: 8,
      unstakedStreamsPer100Ms: 20,
    });
  });

  it('refuses slot times outside 200..2000 ms, more links than validators, percentages over 100', () => {
    expect(() => configSchema.parse({ localnet: { slotMs: 150 } })).toThrow();
    expect(() => configSchema.parse({ localnet: { slotMs: 2_500 } })).toThrow();
    expect(configSchema.parse({ localnet: { slotMs: 200 } }).localnet.slotMs).toBe(200);
    expect(() => configSchema.parse({ localnet: { validators: 2, links: [{}, {}, {}] } })).toThrow(/3 entries for 2 validators/);
    expect(() => configSchema.parse({ localnet: { links: [{ lossPct: 101 }] } })).toThrow();
    expect(() => configSchema.parse({ localnet: { links: [{ colour: 1 }] } })).toThrow();
  });

  it('reaches the child as --bench-json and becomes the same LocalnetOptions', () => {
    const c = configSchema.parse({
      localnet: {
        slotMs: 200,
        links: [{ oneWayDelayMs: 30 }, { txDropPct: 20, lossPct: 5 }, { down: true }],
        rpc: { oneWayDelayMs: 40 },
        qos: { enabled: true },
        stakedPeers: [{ identity: STAKED, stakeSol: 1_000 }],
      },
    }).localnet;
    const args = localnetChildArgs(c);
    expect(args[0]).toBe('--bench-json');
    expect(parseBenchJson(args[1])).toEqual(c);
    const o = parseLocalnetArgs(args);
    expect(o).toMatchObject({ slotMs: 200, validators: 4, rpc: { oneWayDelayMs: 40, leaderForwardCount: 2 }, qos: { enabled: true } });
    expect(o.links?.[2]).toMatchObject({ down: true, lossPct: 0 });
    expect(o.stakedPeers).toEqual([{ identity: STAKED, stake: 1_000_000_000_000n }]);
    expect(localnetOptionsFromConfig(c).links).toEqual(o.links);
    // Flags overlay the section.
    const f = parseLocalnetArgs([...args, '--down', '0', '--tx-drop-pct', '0,50', '--rpc-one-way-delay-ms', '5']);
    expect(f.links?.[0]).toMatchObject({ down: true, oneWayDelayMs: 30 });
    expect(f.links?.[1]).toMatchObject({ txDropPct: 50, lossPct: 5 });
    expect(f.rpc?.oneWayDelayMs).toBe(5);
    expect(() => parseLocalnetArgs(['--bench-json', '{"slotMs":100}'])).toThrow(/localnet\.slotMs/);
  });
});

describe('localnet: shredToBankMs (docs/localnet.md "When the RPC node learns of a slot")', () => {
  it('defaults to 5, reaches the child, is overlaid by --shred-to-bank-ms and must stay below the slot time', () => {
    const c = configSchema.parse({}).localnet;
    expect(c.shredToBankMs).toBe(5);
    expect(parseLocalnetArgs(localnetChildArgs(configSchema.parse({ localnet: { shredToBankMs: 40 } }).localnet)).shredToBankMs).toBe(40);
    expect(parseLocalnetArgs([...localnetChildArgs(c), '--shred-to-bank-ms', '20']).shredToBankMs).toBe(20);
    expect(() => configSchema.parse({ localnet: { slotMs: 200, shredToBankMs: 200 } })).toThrow(/shredToBankMs: must be below slotMs \(200\)|must be below slotMs/);
    expect(() => parseLocalnetArgs(['--slot-ms', '100', '--shred-to-bank-ms', '100'])).toThrow(/--shred-to-bank-ms must be below the slot time \(100 ms\)/);
    expect(() => parseLocalnetArgs(['--shred-to-bank-ms', '-1'])).toThrow();
  });
});

describe('TpuQos (Agave rules)', () => {
  const stakes = new Map<string, bigint>([
    ['validatorA', 1_000_000n],
    [STAKED, 1_000n], // 1/1001 of the total: staked
    ['dust', 10n], // below 1/50,000 of the total: unstaked
  ]);
  const peer = (id: number, identity: string | null, ip = '127.0.0.1') => ({ id, remoteAddress: ip, identity });

  it('staked above 1/50,000 of the total stake, unstaked below it or without a key', () => {
    const q = new TpuQos({ enabled: true }, stakes);
    expect(q.isStaked(STAKED)).toBe(true);
    expect(q.isStaked('dust')).toBe(false);
    expect(q.isStaked('unknown')).toBe(false);
    expect(q.isStaked(null)).toBe(false);
  });

  it('caps open connections per peer (8 unstaked, 16 staked) with code 4, and frees a place on close', () => {
    const q = new TpuQos({ enabled: true, maxConnectionsPerIpPerMinute: 1_000 }, stakes);
    for (let i = 0; i < 8; i++) expect(q.admitConnection(peer(i, 'u'), 0)).toBeNull();
    expect(q.admitConnection(peer(8, 'u'), 0)).toEqual({ code: 4, reason: 'too_many' });
    // Another identity on the same address is another peer here (the loopback stand-in for another host).
    expect(q.admitConnection(peer(9, 'v'), 0)).toBeNull();
    q.connectionClosed(peer(3, 'u'));
    q.connectionClosed(peer(8, 'u')); // never admitted: no effect
    expect(q.admitConnection(peer(10, 'u'), 0)).toBeNull();
    expect(q.admitConnection(peer(11, 'u'), 0)).toEqual({ code: 4, reason: 'too_many' });
    for (let i = 0; i < 16; i++) expect(q.admitConnection(peer(100 + i, STAKED), 0)).toBeNull();
    expect(q.admitConnection(peer(200, STAKED), 0)).toEqual({ code: 4, reason: 'too_many' });
  });

  it('8 new connections per peer per minute, one more every 7.5 s (code 2)', () => {
    const q = new TpuQos({ enabled: true }, stakes);
    for (let i = 0; i < 8; i++) {
      expect(q.admitConnection(peer(i, 'u'), i)).toBeNull();
      q.connectionClosed(peer(i, 'u'));
    }
    expect(q.admitConnection(peer(8, 'u'), 100)).toEqual({ code: 2, reason: 'disallowed' });
    expect(q.admitConnection(peer(9, 'u'), 7_000)).toEqual({ code: 2, reason: 'disallowed' });
    expect(q.admitConnection(peer(10, 'u'), 7_600)).toBeNull();
    expect(q.counters.rateLimited).toBe(2);
  });

  it('an unstaked peer reads 20 streams per 100 ms window across its connections; a staked peer is not throttled', () => {
    const q = new TpuQos({ enabled: true }, stakes);
    q.admitConnection(peer(1, 'u'), 0);
    q.admitConnection(peer(2, 'u'), 0);
    q.admitConnection(peer(3, STAKED), 0);
    for (let i = 0; i < 10; i++) expect(q.admitStream(peer(1, 'u'), 10)).toBe(0);
    for (let i = 0; i < 10; i++) expect(q.admitStream(peer(2, 'u'), 20)).toBe(0);
    expect(q.admitStream(peer(1, 'u'), 30)).toBe(70); // the window opened at 0 ends at 100
    expect(q.admitStream(peer(2, 'u'), 99)).toBe(1);
    expect(q.admitStream(peer(1, 'u'), 101)).toBe(0); // a new window
    for (let i = 0; i < 1_000; i++) expect(q.admitStream(peer(3, STAKED), 50)).toBe(0);
    expect(q.counters.throttled).toBe(2);
  });
});
