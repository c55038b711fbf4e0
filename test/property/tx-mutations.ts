// Mutated real transactions for the property tests: a fixed pool of signed legacy and v0 transactions
// (real-transactions.ts) changed field by field through the wire model (agave-model.ts: duplicated account keys, header
// counts, program and account indexes, signature counts, version bytes, lookup tables, compute-budget instructions) and
// byte by byte (bit flips, truncation, extension, insertion, deletion, non-strict short_vec lengths).
import fc from 'fast-check';
import { cloneWire, COMPUTE_BUDGET_PROGRAM, serializeWire, wireFromBytes, type WireTx } from './agave-model.js';
import { buildReal, shapeArb } from './real-transactions.js';

const POOL_SEED = 0x5eed_0004;
const MAX_TX = 1232;

/** A fixed pool of real transactions (signing is the slow part; mutations make the variety). */
const POOL: readonly Buffer[] = fc.sample(fc.tuple(shapeArb, fc.nat()), { seed: POOL_SEED, numRuns: 16 }).map(([shape, s]) => buildReal(shape, s));
// Always include the shapes the fixtures test: legacy two signers with compute budget, v0 with lookups.
export const POOL_ALL: readonly Buffer[] = [
  ...POOL,
  buildReal({ v0: false, signers: 2, transfers: 2, computeBudget: ['limit', 'price'], customIx: false, tables: 0 }, 1),
  buildReal({ v0: true, signers: 1, transfers: 2, computeBudget: [], customIx: true, tables: 2 }, 2),
  buildReal({ v0: true, signers: 3, transfers: 1, computeBudget: ['heap', 'loaded'], customIx: true, tables: 1 }, 3),
];

// ---- mutations ----

type WireMutation = (tx: WireTx) => void;

export const u8 = fc.integer({ min: 0, max: 255 });
const smallDelta = fc.constantFrom(-2, -1, 1, 2);
const anyKey = fc.uint8Array({ minLength: 32, maxLength: 32 });

/** Index `i` into an array of length n (n > 0), or null. */
function pick(n: number, i: number): number | null {
  return n === 0 ? null : i % n;
}

const wireMutation: fc.Arbitrary<{ name: string; apply: WireMutation }> = fc.oneof(
  // An account key listed twice: over another key, or appended.
  fc.tuple(fc.nat(), fc.nat(), fc.boolean()).map(([i, j, append]) => ({
    name: `duplicate key ${i}->${append ? 'end' : j}`,
    apply: (tx: WireTx) => {
      const a = pick(tx.keys.length, i);
      if (a === null) return;
      if (append) tx.keys.push(Uint8Array.from(tx.keys[a]));
      else {
        const b = pick(tx.keys.length, j)!;
        tx.keys[b] = Uint8Array.from(tx.keys[a]);
      }
    },
  })),
  // Header counts: arbitrary bytes or off by one or two.
  fc.tuple(fc.nat(2), fc.oneof(u8.map((v) => ({ set: v })), smallDelta.map((d) => ({ add: d })))).map(([k, op]) => ({
    name: `header[${k}] ${JSON.stringify(op)}`,
    apply: (tx: WireTx) => {
      tx.header[k] = 'set' in op ? op.set : (tx.header[k] + op.add) & 0xff;
    },
  })),
  // Signatures: drop one, add one, or none at all.
  fc.constantFrom('drop', 'add', 'none').map((op) => ({
    name: `signatures ${op}`,
    apply: (tx: WireTx) => {
      if (op === 'drop') tx.signatures.pop();
      else if (op === 'add') tx.signatures.push(new Uint8Array(64).fill(9));
      else tx.signatures = [];
    },
  })),
  // Program index: zero (the fee payer), the last static key, one past it, anything.
  fc.tuple(fc.nat(), fc.oneof(fc.constantFrom('zero', 'last', 'past', 'pastAll'), u8)).map(([i, v]) => ({
    name: `programIndex[${i}] ${String(v)}`,
    apply: (tx: WireTx) => {
      const k = pick(tx.instructions.length, i);
      if (k === null) return;
      const lookups = tx.lookups.reduce((n, l) => n + l.writable.length + l.readonly.length, 0);
      tx.instructions[k].programIndex =
        v === 'zero' ? 0 : v === 'last' ? tx.keys.length - 1 : v === 'past' ? tx.keys.length : v === 'pastAll' ? tx.keys.length + lookups : v;
    },
  })),
  // Account index: at or past the end of the static keys (+ lookups), or anything.
  fc.tuple(fc.nat(), fc.nat(), fc.oneof(fc.constantFrom('lastStatic', 'pastStatic', 'lastAll', 'pastAll'), u8)).map(([i, j, v]) => ({
    name: `account[${i}][${j}] ${String(v)}`,
    apply: (tx: WireTx) => {
      const k = pick(tx.instructions.length, i);
      if (k === null) return;
      const lookups = tx.lookups.reduce((n, l) => n + l.writable.length + l.readonly.length, 0);
      const value =
        v === 'lastStatic' ? tx.keys.length - 1 : v === 'pastStatic' ? tx.keys.length : v === 'lastAll' ? tx.keys.length + lookups - 1 : v === 'pastAll' ? tx.keys.length + lookups : v;
      const ix = tx.instructions[k];
      const a = pick(ix.accounts.length, j);
      if (a === null) ix.accounts.push(value);
      else ix.accounts[a] = value;
    },
  })),
  // Version byte: legacy <-> v0, or another version (1..127).
  fc.oneof(fc.constantFrom<number | null>(null, 0x80, 0xff, 0x81), u8.map((v) => v | 0x80)).map((p) => ({
    name: `version prefix ${p === null ? 'legacy' : p.toString(16)}`,
    apply: (tx: WireTx) => {
      tx.versionPrefix = p;
    },
  })),
  // Lookup tables: an empty one, one with many indexes (past 256 accounts), one more ordinary one, none.
  fc.tuple(fc.constantFrom('empty', 'huge', 'add', 'clear', 'writableOnly'), anyKey, fc.array(u8, { maxLength: 6 }), fc.array(u8, { maxLength: 6 })).map(([op, key, w, r]) => ({
    name: `lookups ${op} ${w.length}/${r.length}`,
    apply: (tx: WireTx) => {
      if (op === 'clear') tx.lookups = [];
      else if (op === 'empty') tx.lookups.push({ key, writable: [], readonly: [] });
      else if (op === 'huge') tx.lookups.push({ key, writable: Array.from({ length: 130 }, (_, i) => i), readonly: Array.from({ length: 130 }, (_, i) => i) });
      else if (op === 'writableOnly') tx.lookups.push({ key, writable: w.length > 0 ? w : [0], readonly: [] });
      else tx.lookups.push({ key, writable: w, readonly: r });
    },
  })),
  // Compute-budget instructions: valid, repeated, unknown tag, too short.
  fc.tuple(fc.constantFrom(1, 2, 3, 4, 0, 5, 9, 255), fc.integer({ min: 0, max: 12 }), fc.nat(), fc.boolean()).map(([tag, len, at, ensureKey]) => ({
    name: `compute budget tag ${tag} len ${len}`,
    apply: (tx: WireTx) => {
      let idx = tx.keys.findIndex((k) => Buffer.from(k).equals(Buffer.from(COMPUTE_BUDGET_PROGRAM)));
      if (idx < 0) {
        if (!ensureKey) return;
        tx.keys.push(Uint8Array.from(COMPUTE_BUDGET_PROGRAM));
        idx = tx.keys.length - 1;
      }
      const data = new Uint8Array(len);
      if (len > 0) data[0] = tag;
      for (let i = 1; i < len; i++) data[i] = (i * 31) & 0xff;
      tx.instructions.splice(at % (tx.instructions.length + 1), 0, { programIndex: idx, accounts: [], data });
    },
  })),
  // Instructions: drop one, repeat one, replace its data.
  fc.tuple(fc.constantFrom('drop', 'repeat', 'data'), fc.nat(), fc.uint8Array({ maxLength: 12 })).map(([op, i, data]) => ({
    name: `instruction ${op} ${i}`,
    apply: (tx: WireTx) => {
      const k = pick(tx.instructions.length, i);
      if (k === null) return;
      if (op === 'drop') tx.instructions.splice(k, 1);
      else if (op === 'repeat') tx.instructions.push({ ...tx.instructions[k], accounts: [...tx.instructions[k].accounts] });
      else tx.instructions[k].data = data;
    },
  })),
  // A key dropped or added (the counts in the header no longer describe the keys).
  fc.tuple(fc.boolean(), fc.nat(), anyKey).map(([drop, i, key]) => ({
    name: `key ${drop ? 'drop' : 'add'} ${i}`,
    apply: (tx: WireTx) => {
      if (drop) {
        const k = pick(tx.keys.length, i);
        if (k !== null) tx.keys.splice(k, 1);
      } else tx.keys.splice(i % (tx.keys.length + 1), 0, key);
    },
  })),
);

type ByteMutation = (b: Buffer) => Buffer;

const byteMutation: fc.Arbitrary<{ name: string; apply: ByteMutation }> = fc.oneof(
  fc.tuple(fc.nat(), fc.nat(7)).map(([p, bit]) => ({
    name: `flip ${p}.${bit}`,
    apply: (b: Buffer) => {
      if (b.length === 0) return b;
      const c = Buffer.from(b);
      c[p % c.length] ^= 1 << bit;
      return c;
    },
  })),
  fc.nat().map((n) => ({ name: `truncate to ${n}`, apply: (b: Buffer) => b.subarray(0, n % (b.length + 1)) })),
  fc.uint8Array({ minLength: 1, maxLength: 40 }).map((x) => ({ name: `extend ${x.length}`, apply: (b: Buffer) => Buffer.concat([b, x]) })),
  fc.tuple(fc.nat(), u8).map(([p, v]) => ({
    name: `insert ${v} at ${p}`,
    apply: (b: Buffer) => {
      const at = p % (b.length + 1);
      return Buffer.concat([b.subarray(0, at), Buffer.from([v]), b.subarray(at)]);
    },
  })),
  fc.nat().map((p) => ({
    name: `delete at ${p}`,
    apply: (b: Buffer) => {
      if (b.length === 0) return b;
      const at = p % b.length;
      return Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]);
    },
  })),
  fc.tuple(fc.nat(), u8).map(([p, v]) => ({
    name: `set ${p} = ${v}`,
    apply: (b: Buffer) => {
      if (b.length === 0) return b;
      const c = Buffer.from(b);
      c[p % c.length] = v;
      return c;
    },
  })),
  // A short_vec length written non-strictly (alias: 0x8N 0x00, or three bytes) — at the signature count, which is
  // always at offset 0, or anywhere.
  fc.tuple(fc.nat(), fc.constantFrom('alias2', 'alias3', 'continue3')).map(([p, how]) => ({
    name: `${how} at ${p}`,
    apply: (b: Buffer) => {
      if (b.length === 0) return b;
      const at = p % 3 === 0 ? 0 : p % b.length;
      const v = b[at];
      const enc = how === 'alias2' ? [v | 0x80, 0x00] : how === 'alias3' ? [v | 0x80, 0x80, 0x00] : [v | 0x80, 0x80, 0x81];
      return Buffer.concat([b.subarray(0, at), Buffer.from(enc), b.subarray(at + 1)]);
    },
  })),
);

export interface Mutated {
  readonly base: number;
  readonly wire: readonly string[];
  readonly bytes: readonly string[];
  readonly tx: Buffer;
}

export const mutatedTx: fc.Arbitrary<Mutated> = fc
  .record({
    base: fc.nat(POOL_ALL.length - 1),
    wire: fc.array(wireMutation, { maxLength: 3 }),
    bytes: fc.oneof({ weight: 3, arbitrary: fc.constant<{ name: string; apply: ByteMutation }[]>([]) }, { weight: 2, arbitrary: fc.array(byteMutation, { minLength: 1, maxLength: 2 }) }),
  })
  .map(({ base, wire, bytes }) => {
    const w = cloneWire(wireFromBytes(POOL_ALL[base]));
    for (const m of wire) m.apply(w);
    let tx = serializeWire(w);
    for (const m of bytes) tx = m.apply(tx);
    return { base, wire: wire.map((m) => m.name), bytes: bytes.map((m) => m.name), tx: tx.subarray(0, MAX_TX) };
  });

/** A mutated transaction as text for assertion messages. */
export function label(m: Mutated): string {
  return `base ${m.base} wire [${m.wire.join('; ')}] bytes [${m.bytes.join('; ')}] tx ${m.tx.toString('base64')}`;
}
