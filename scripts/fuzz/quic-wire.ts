// Junk QUIC datagrams for the live fuzzer's QUIC phase, and the check of what the relay sends back to them (harness
// process; generation and judging, warm). RFC 9000 / RFC 8999 / RFC 9001 are the oracle, with docs/quic-ingress.md's
// "Handshakes and floods of Initials": an Initial of an unsupported version in a datagram of at least 1,200 bytes may
// get a Version Negotiation packet listing QUIC v1 (RFC 9000 §6.1; smaller ones must be dropped, §5.2.2); a tokenless
// v1 Initial of at least 1,200 bytes may get a Retry (its integrity tag checked, RFC 9001 §5.8; smaller datagrams
// must be discarded, §14.1); nothing else of ours may draw any answer (a forged token, other packet types, truncated
// headers, short headers, Version Negotiation packets).
import { createCipheriv } from 'node:crypto';
import type { Rng } from './rng.js';

export const MIN_INITIAL_DATAGRAM = 1200;
const V1 = 1;
/** RFC 9001 §5.8: the Retry integrity key and nonce of QUIC v1. */
const RETRY_KEY = Buffer.from('be0c690b9f66575a1d766b54e368c84e', 'hex');
const RETRY_NONCE = Buffer.from('461599d35d632bf2239825bb', 'hex');

export type JunkKind =
  | 'v1 initial'
  | 'v1 initial, short datagram'
  | 'v1 initial, forged token'
  | 'other version'
  | 'other version, short datagram'
  | 'version negotiation'
  | 'v1 other long type'
  | 'truncated header'
  | 'short header'
  | 'random bytes';

export const JUNK_KINDS: readonly (readonly [number, JunkKind])[] = [
  [30, 'v1 initial'],
  [8, 'v1 initial, short datagram'],
  [8, 'v1 initial, forged token'],
  [10, 'other version'],
  [6, 'other version, short datagram'],
  [4, 'version negotiation'],
  [6, 'v1 other long type'],
  [6, 'truncated header'],
  [8, 'short header'],
  [6, 'random bytes'],
];

/** What a datagram may draw from the relay. */
export type ReplyKind = 'version_negotiation' | 'retry';

export interface Junk {
  readonly kind: JunkKind;
  readonly bytes: Buffer;
  /** Our source and destination connection ids as the header carries them ('' when none can be parsed). */
  readonly scid: string;
  readonly dcid: string;
  /** The answers it may get (none: any answer is a finding). */
  readonly allowed: readonly ReplyKind[];
}

const OTHER_VERSIONS = [0xff00001d, 0x6b3343cf, 0x00000002, 0x1a2a3a4a, 0xfaceb002, 0x51303530, 0xffffffff, 0x00000003];

function varint(n: number): Buffer {
  return n < 64 ? Buffer.from([n]) : Buffer.from([0x40 | (n >> 8), n & 0xff]);
}

/** A long-header packet: flags, version, ids, (Initial: token), Length, then random bytes to `size`. */
function longHeader(rng: Rng, first: number, version: number, dcid: Buffer, scid: Buffer, token: Buffer | null, size: number): Buffer {
  const head = [Buffer.from([first]), Buffer.alloc(4), Buffer.from([dcid.length]), dcid, Buffer.from([scid.length]), scid];
  head[1].writeUInt32BE(version >>> 0);
  if (token !== null) head.push(varint(token.length), token);
  const h = Buffer.concat(head);
  // Length (a 2-byte varint): packet number and payload, the random rest of the datagram.
  const rest = Math.min(16383, Math.max(4, size - h.length - 2));
  const len = Buffer.from([0x40 | (rest >> 8), rest & 0xff]);
  return Buffer.concat([h, len, rng.bytes(rest)]);
}

/** One junk datagram of a kind drawn by weight; `tag` makes its source id unique (the answer's destination id). */
export function junkDatagram(rng: Rng, tag: number): Junk {
  const kind = rng.weighted(JUNK_KINDS);
  const scid = Buffer.alloc(8);
  scid.writeUInt32BE(tag >>> 0, 0);
  scid.writeUInt32BE(rng.u32(), 4);
  const dcid = rng.bytes(rng.range(8, 20));
  const full = (): number => rng.range(MIN_INITIAL_DATAGRAM, 1350);
  const short = (): number => rng.range(40, MIN_INITIAL_DATAGRAM - 1);
  const initialFlags = (): number => 0xc0 | rng.int(4);
  const make = (bytes: Buffer, allowed: ReplyKind[]): Junk => ({ kind, bytes, scid: scid.toString('hex'), dcid: dcid.toString('hex'), allowed });
  switch (kind) {
    case 'v1 initial':
      return make(longHeader(rng, initialFlags(), V1, dcid, scid, Buffer.alloc(0), full()), ['retry']);
    case 'v1 initial, short datagram':
      return make(longHeader(rng, initialFlags(), V1, dcid, scid, Buffer.alloc(0), short()), []);
    case 'v1 initial, forged token':
      return make(longHeader(rng, initialFlags(), V1, dcid, scid, rng.bytes(rng.range(1, 96)), full()), []);
    case 'other version':
      return make(longHeader(rng, initialFlags(), rng.pick(OTHER_VERSIONS), dcid, scid, Buffer.alloc(0), full()), ['version_negotiation']);
    case 'other version, short datagram':
      return make(longHeader(rng, initialFlags(), rng.pick(OTHER_VERSIONS), dcid, scid, Buffer.alloc(0), short()), []);
    case 'version negotiation': {
      const b = Buffer.concat([Buffer.from([0x80 | rng.int(128)]), Buffer.alloc(4), Buffer.from([dcid.length]), dcid, Buffer.from([8]), scid, rng.bytes(4 * rng.range(1, 4))]);
      return make(b, []);
    }
    case 'v1 other long type': {
      // 0-RTT (1), Handshake (2), Retry (3) from an unknown client: nothing to route them to.
      const ty = rng.range(1, 3);
      return make(longHeader(rng, 0xc0 | (ty << 4) | rng.int(16), V1, dcid, scid, null, rng.pick([full(), short()])), []);
    }
    case 'truncated header': {
      const b = longHeader(rng, initialFlags(), rng.chance(0.5) ? V1 : rng.pick(OTHER_VERSIONS), dcid, scid, Buffer.alloc(0), full());
      return make(b.subarray(0, rng.range(1, 6 + dcid.length)), []);
    }
    case 'short header': {
      const b = rng.bytes(rng.pick([rng.range(1, 60), full()]));
      b[0] = 0x40 | (b[0] & 0x3f);
      return { kind, bytes: b, scid: '', dcid: '', allowed: [] };
    }
    case 'random bytes': {
      const b = rng.bytes(rng.pick([rng.range(1, 40), rng.range(41, 1199), full()]));
      return { kind, bytes: b, ...parseIds(b), allowed: allowedFor(b) };
    }
  }
}

/** A tokenless full-size QUIC v1 Initial with random contents (the junk of a flood); it may get a Retry. */
export function v1Initial(rng: Rng, tag: number): Junk {
  const scid = Buffer.alloc(8);
  scid.writeUInt32BE(tag >>> 0, 0);
  scid.writeUInt32BE(rng.u32(), 4);
  const dcid = rng.bytes(8);
  const bytes = longHeader(rng, 0xc0 | rng.int(4), V1, dcid, scid, Buffer.alloc(0), MIN_INITIAL_DATAGRAM);
  return { kind: 'v1 initial', bytes, scid: scid.toString('hex'), dcid: dcid.toString('hex'), allowed: ['retry'] };
}

/** The ids of a long header, when the bytes hold one ('' otherwise). */
function parseIds(b: Buffer): { scid: string; dcid: string } {
  if (b.length < 7 || (b[0] & 0x80) === 0) return { scid: '', dcid: '' };
  const dl = b[5];
  if (b.length < 7 + dl || b.length < 7 + dl + b[6 + dl]) return { scid: '', dcid: '' };
  return { dcid: b.subarray(6, 6 + dl).toString('hex'), scid: b.subarray(7 + dl, 7 + dl + b[6 + dl]).toString('hex') };
}

/** Random bytes judged as the relay would have to: an Initial-typed long header of a foreign version may get a VN. */
function allowedFor(b: Buffer): ReplyKind[] {
  if (b.length < MIN_INITIAL_DATAGRAM || (b[0] & 0x80) === 0) return [];
  const version = b.readUInt32BE(1);
  if (version === 0) return [];
  if (version === V1) return (b[0] & 0x30) === 0 ? ['retry'] : [];
  return ['version_negotiation'];
}

export interface ReplyVerdict {
  readonly kind: ReplyKind | 'other';
  /** The destination id of the reply (our scid), hex. */
  readonly dcid: string;
  /** Why it is wrong, or null when it is a well-formed answer of its kind to `junk`. */
  readonly problem: string | null;
}

/** Judges one datagram the relay sent to our junk socket against the datagram it answers (null: none matches). */
export function judgeReply(reply: Buffer, sentByScid: ReadonlyMap<string, Junk>): ReplyVerdict {
  if (reply.length < 7 || (reply[0] & 0x80) === 0) return { kind: 'other', dcid: '', problem: `a ${reply.length}-byte short-header datagram` };
  const version = reply.readUInt32BE(1);
  const dl = reply[5];
  const dcid = reply.subarray(6, 6 + dl).toString('hex');
  const sl = reply[6 + dl] ?? 0;
  const scid = reply.subarray(7 + dl, 7 + dl + sl);
  const junk = sentByScid.get(dcid);
  const kind: ReplyKind | 'other' = version === 0 ? 'version_negotiation' : version === V1 && (reply[0] & 0x30) === 0x30 ? 'retry' : 'other';
  if (junk === undefined) return { kind, dcid, problem: `a ${kind} to an id we never sent (${dcid})` };
  if (kind === 'other') return { kind, dcid, problem: `a long-header packet of version 0x${version.toString(16)}, type ${(reply[0] >> 4) & 3}, to a "${junk.kind}" datagram of ${junk.bytes.length} bytes` };
  if (!junk.allowed.includes(kind)) return { kind, dcid, problem: `a ${kind} to a "${junk.kind}" datagram of ${junk.bytes.length} bytes (it must draw no answer)` };
  if (kind === 'version_negotiation') {
    if (scid.toString('hex') !== junk.dcid) return { kind, dcid, problem: 'version negotiation whose source id is not our destination id' };
    const list = reply.subarray(7 + dl + sl);
    const versions: number[] = [];
    for (let i = 0; i + 4 <= list.length; i += 4) versions.push(list.readUInt32BE(i));
    if (list.length % 4 !== 0 || !versions.includes(V1)) return { kind, dcid, problem: `version negotiation without QUIC v1: ${list.toString('hex')}` };
    return { kind, dcid, problem: null };
  }
  // Retry: the integrity tag over the pseudo-packet (our original destination id, then the Retry without its tag).
  if (reply.length < 7 + dl + sl + 16 + 1) return { kind, dcid, problem: `a Retry of ${reply.length} bytes: no room for a token and its tag` };
  const odcid = Buffer.from(junk.dcid, 'hex');
  const body = reply.subarray(0, reply.length - 16);
  const cipher = createCipheriv('aes-128-gcm', RETRY_KEY, RETRY_NONCE);
  cipher.setAAD(Buffer.concat([Buffer.from([odcid.length]), odcid, body]));
  cipher.update(Buffer.alloc(0));
  cipher.final();
  if (!cipher.getAuthTag().equals(reply.subarray(reply.length - 16))) return { kind, dcid, problem: 'a Retry whose integrity tag does not verify (RFC 9001 §5.8)' };
  return { kind, dcid, problem: null };
}
