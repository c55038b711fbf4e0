// Publishing and reading the leader-slot snapshot (layout: src/shm/snapshot-layout.ts).
// SnapshotWriter runs on the telemetry thread (cold-ish: once per slot). SnapshotReader runs on the front thread
// and in egress workers (HOT: current() is called per getLeaderSlots request / per scheduling decision, and costs one
// Atomics.load while the generation is unchanged; the payload is copied and decoded once per new generation).
// Per new generation (every slot) that first read used to copy and decode the whole payload, ~400 KB of row text at
// mainnet size (~2 ms, p99 ~9 ms), on whichever thread read first, i.e. inside a transaction's path in the QUIC
// thread (issue #28). Readers that only need who leads (SnapshotLeaderSource: the egress scheduler, the front's
// route checks) ask for { rows: false }: header + leader index + leader table only, no row text. And the leader
// table, which rarely changes between generations, is parsed again only when its bytes changed.
import type { LeaderInfo } from './leader-source.js';
import {
  HDR_BYTES,
  HDR_FIRST_SLOT,
  HDR_GENERATED_AT,
  HDR_LEADER_COUNT,
  HDR_LEADERS_BYTES,
  HDR_PRODUCERS_PER_SLOT,
  HDR_ROW_COUNT,
  HDR_ROWS_BYTES,
  HDR_SCHEMA_VERSION,
  HDR_SLOT_MS,
  HDR_SLOT_MS_SAMPLES,
  HDR_SNAPSHOT_SLOT,
  MAX_LEADERS,
  MAX_PRODUCERS_PER_SLOT,
  NO_PRODUCER,
  SNAP_CTL_LEN,
  SNAP_CTL_PUBLISHED,
  SNAP_CTL_SEQ,
  SNAPSHOT_SCHEMA_VERSION,
  attachSnapshotBuffer,
  bufferBase,
  leaderIndexOffset,
  rowOffsetsOffset,
  sectionsOffset,
} from '../shm/snapshot-layout.js';

/** What the telemetry thread publishes. `rows[i]` is the JSON text of slot firstSlot + i (ASCII only). */
export interface SnapshotContent {
  readonly schemaVersion: number;
  readonly firstSlot: number;
  readonly snapshotSlot: number;
  readonly generatedAtUnixMs: number;
  /** Measured slot duration, ms (src/telemetry/slot-duration.ts); the fallback while slotMsSamples is 0. */
  readonly slotMs: number;
  /** Slot advances behind slotMs (0: not measured yet). Default 0. */
  readonly slotMsSamples?: number;
  readonly leaders: readonly LeaderInfo[];
  /**
   * Index into `leaders` per row and producer: rows.length * producersPerSlot entries, row i's at i*K .. i*K+K-1,
   * the first always a leader, the rest NO_PRODUCER when the slot has fewer producers.
   */
  readonly leaderIndex: ArrayLike<number>;
  /** K, the producers each slot may have (default 1: one leader per slot, every source today). */
  readonly producersPerSlot?: number;
  readonly rows: readonly string[];
}

/** A decoded generation, immutable, shared by every caller until the next generation. */
export interface SnapshotView {
  readonly generation: number;
  readonly schemaVersion: number;
  /** False when schemaVersion is not SNAPSHOT_SCHEMA_VERSION: only the header fields are decoded. */
  readonly supported: boolean;
  readonly firstSlot: number;
  /** firstSlot + rowCount - 1 (firstSlot - 1 when empty). */
  readonly lastSlot: number;
  readonly rowCount: number;
  readonly snapshotSlot: number;
  readonly generatedAtUnixMs: number;
  /** The slot duration the telemetry thread measured, ms (the fallback while slotMsSamples is 0): use slotMsOf(). */
  readonly slotMs: number;
  /** Slot advances behind slotMs; 0 = not measured. */
  readonly slotMsSamples: number;
  readonly leaders: readonly LeaderInfo[];
  /** The first producer (the leader) of each row: index into `leaders`. */
  readonly leaderIndex: Uint16Array;
  /** K: the producers a row may have (1 today). */
  readonly producersPerSlot: number;
  /** Every producer of each row, K per row (row i at i*K..): index into `leaders`, NO_PRODUCER past the last one. */
  readonly producerIndex: Uint16Array;
  /** Every row's JSON joined with ','; rows i..j-1 are rowsText.slice(rowOffsets[i], rowOffsets[j] - 1). */
  readonly rowsText: string;
  readonly rowOffsets: Uint32Array;
}

export class SnapshotWriter {
  private readonly ctl: Int32Array;
  private readonly capacity: number;
  private readonly sab: SharedArrayBuffer;

  constructor(sab: SharedArrayBuffer) {
    const a = attachSnapshotBuffer(sab);
    this.ctl = a.ctl;
    this.capacity = a.capacity;
    this.sab = sab;
  }

  get generation(): number {
    return Atomics.load(this.ctl, SNAP_CTL_PUBLISHED) >>> 0;
  }

  /** Publish one generation; returns its number. Throws (publishing nothing) if the content does not fit. */
  publish(c: SnapshotContent): number {
    const rowCount = c.rows.length;
    const k = c.producersPerSlot ?? 1;
    if (!Number.isInteger(k) || k < 1 || k > MAX_PRODUCERS_PER_SLOT) throw new Error(`producersPerSlot must be 1..${MAX_PRODUCERS_PER_SLOT}, got ${k}`);
    if (c.leaderIndex.length !== rowCount * k) throw new Error('leaderIndex must hold producersPerSlot entries per row');
    if (c.leaders.length > MAX_LEADERS) throw new Error(`too many leaders in one snapshot (${c.leaders.length})`);
    const leadersJson = JSON.stringify(c.leaders.map((l) => [l.identity, l.tpuQuic, l.stake]));
    const rowsText = c.rows.join(',');
    const leadersBytes = Buffer.byteLength(leadersJson, 'utf8');
    if (Buffer.byteLength(rowsText, 'utf8') !== rowsText.length) {
      throw new Error('row text must be ASCII (escape other characters as \\uXXXX)');
    }
    const sections = sectionsOffset(rowCount, k);
    const total = sections + leadersBytes + rowsText.length;
    if (total > this.capacity) throw new Error(`snapshot of ${total} bytes exceeds the buffer capacity ${this.capacity}`);

    const published = this.generation;
    const gen = (published + 1) >>> 0 || 1; // skip 0 (= nothing published) on wrap
    const b = (gen - 1) & 1;
    const base = bufferBase(b, this.capacity);
    Atomics.add(this.ctl, SNAP_CTL_SEQ[b], 1); // odd: being written
    const dv = new DataView(this.sab, base, total);
    dv.setUint32(HDR_SCHEMA_VERSION, c.schemaVersion, true);
    dv.setUint32(HDR_ROW_COUNT, rowCount, true);
    dv.setFloat64(HDR_FIRST_SLOT, c.firstSlot, true);
    dv.setFloat64(HDR_SNAPSHOT_SLOT, c.snapshotSlot, true);
    dv.setFloat64(HDR_GENERATED_AT, c.generatedAtUnixMs, true);
    dv.setFloat64(HDR_SLOT_MS, c.slotMs, true);
    dv.setUint32(HDR_LEADER_COUNT, c.leaders.length, true);
    dv.setUint32(HDR_LEADERS_BYTES, leadersBytes, true);
    dv.setUint32(HDR_ROWS_BYTES, rowsText.length, true);
    dv.setUint32(HDR_SLOT_MS_SAMPLES, c.slotMsSamples ?? 0, true);
    dv.setUint32(HDR_PRODUCERS_PER_SLOT, k, true);
    const idx = new Uint16Array(this.sab, base + leaderIndexOffset(), rowCount * k);
    for (let i = 0; i < rowCount * k; i++) idx[i] = c.leaderIndex[i];
    const offs = new Uint32Array(this.sab, base + rowOffsetsOffset(rowCount, k), rowCount + 1);
    let at = 0;
    for (let i = 0; i < rowCount; i++) {
      offs[i] = at;
      at += c.rows[i].length + 1;
    }
    offs[rowCount] = at === 0 ? 1 : at; // = rowsText.length + 1
    const bytes = Buffer.from(this.sab, base, total);
    bytes.write(leadersJson, sections, 'utf8');
    bytes.write(rowsText, sections + leadersBytes, 'latin1');
    Atomics.store(this.ctl, SNAP_CTL_LEN[b], total);
    Atomics.add(this.ctl, SNAP_CTL_SEQ[b], 1); // even: complete
    Atomics.store(this.ctl, SNAP_CTL_PUBLISHED, gen | 0);
    return gen;
  }
}

/** How many times a reader retries a copy the writer overwrote underneath it before keeping its previous view. */
const READ_RETRIES = 8;

export interface SnapshotReaderOptions {
  /**
   * false: decode the header, the leader index and the leader table only (the view's rowsText is '' and its
   * rowOffsets all 0): what leaderAt() needs, without copying the rows. Default true (getLeaderSlots).
   */
  readonly rows?: boolean;
}

export class SnapshotReader {
  private readonly ctl: Int32Array;
  private readonly capacity: number;
  private readonly sab: SharedArrayBuffer;
  private readonly rows: boolean;
  private view: SnapshotView | null = null;
  private scratch = new Uint8Array(0);
  /** The last leader table: its bytes and what they decoded to (reused while the bytes are the same). */
  private leadersCache: LeadersCache | null = null;
  /** Copies discarded because the writer reused the buffer during the copy (observability for the torn-read test). */
  retries = 0;
  /** Bytes copied out of shared memory by the last refresh (diagnostics and tests). */
  lastCopyBytes = 0;

  constructor(sab: SharedArrayBuffer, opts: SnapshotReaderOptions = {}) {
    const a = attachSnapshotBuffer(sab);
    this.ctl = a.ctl;
    this.capacity = a.capacity;
    this.sab = sab;
    this.rows = opts.rows ?? true;
  }

  /** Generations published so far (0: none). */
  generation(): number {
    return Atomics.load(this.ctl, SNAP_CTL_PUBLISHED) >>> 0;
  }

  /** The latest whole snapshot, or null when nothing was ever published. No I/O, no allocation when unchanged. */
  current(): SnapshotView | null {
    const gen = Atomics.load(this.ctl, SNAP_CTL_PUBLISHED) >>> 0;
    if (gen === 0) return null;
    if (this.view !== null && this.view.generation === gen) return this.view;
    return this.refresh(gen);
  }

  private refresh(firstGen: number): SnapshotView | null {
    let gen = firstGen;
    for (let attempt = 0; attempt < READ_RETRIES; attempt++) {
      const b = (gen - 1) & 1;
      const s1 = Atomics.load(this.ctl, SNAP_CTL_SEQ[b]);
      if ((s1 & 1) === 0) {
        let len = Atomics.load(this.ctl, SNAP_CTL_LEN[b]);
        if (len >= HDR_BYTES && len <= this.capacity) {
          const base = bufferBase(b, this.capacity);
          // Leaders only: the prefix up to the end of the leader table (read from the header under the same
          // seqlock: a torn header is caught by the sequence check below like a torn payload).
          if (!this.rows) len = Math.max(HDR_BYTES, Math.min(len, leadersEnd(new DataView(this.sab, base, HDR_BYTES))));
          if (this.scratch.length < len) this.scratch = new Uint8Array(Math.max(len, this.scratch.length * 2));
          const copy = this.scratch.subarray(0, len);
          copy.set(new Uint8Array(this.sab, base, len));
          if (Atomics.load(this.ctl, SNAP_CTL_SEQ[b]) === s1) {
            this.lastCopyBytes = len;
            this.view = this.decode(copy, gen);
            return this.view;
          }
        }
      }
      this.retries++;
      gen = Atomics.load(this.ctl, SNAP_CTL_PUBLISHED) >>> 0;
    }
    return this.view; // the writer kept lapping us: the previous whole view is still consistent
  }

  /** Decode a private copy of one buffer's payload (or of its prefix up to the leader table, rows: false). */
  private decode(copy: Uint8Array, generation: number): SnapshotView {
    return decode(copy, generation, this.rows, this);
  }

  /** The leader table for these bytes: the previous one when they did not change. */
  leadersOf(bytes: Buffer): readonly LeaderInfo[] {
    const c = this.leadersCache;
    if (c !== null && c.bytes.equals(bytes)) return c.leaders;
    const raw = JSON.parse(bytes.toString('utf8')) as [string, string | null, number][];
    const leaders = Object.freeze(raw.map(([identity, tpuQuic, stake]) => Object.freeze({ identity, tpuQuic, stake })));
    this.leadersCache = { bytes: Buffer.from(bytes), leaders };
    return leaders;
  }
}

interface LeadersCache {
  readonly bytes: Buffer;
  readonly leaders: readonly LeaderInfo[];
}

/** Where the leader table ends, from a buffer's header (0 when the header is not whole yet: the copy is retried). */
function leadersEnd(hdr: DataView): number {
  const rowCount = hdr.getUint32(HDR_ROW_COUNT, true);
  const k = hdr.getUint32(HDR_PRODUCERS_PER_SLOT, true);
  if (k < 1 || k > MAX_PRODUCERS_PER_SLOT) return 0;
  return sectionsOffset(rowCount, k) + hdr.getUint32(HDR_LEADERS_BYTES, true);
}

/** Decode a private copy of one buffer's payload. */
function decode(copy: Uint8Array, generation: number, rows: boolean, reader: SnapshotReader): SnapshotView {
  const dv = new DataView(copy.buffer, copy.byteOffset, copy.byteLength);
  const schemaVersion = dv.getUint32(HDR_SCHEMA_VERSION, true);
  const rowCount = dv.getUint32(HDR_ROW_COUNT, true);
  const firstSlot = dv.getFloat64(HDR_FIRST_SLOT, true);
  const head = {
    generation,
    schemaVersion,
    firstSlot,
    snapshotSlot: dv.getFloat64(HDR_SNAPSHOT_SLOT, true),
    generatedAtUnixMs: dv.getFloat64(HDR_GENERATED_AT, true),
    slotMs: dv.getFloat64(HDR_SLOT_MS, true),
    slotMsSamples: dv.getUint32(HDR_SLOT_MS_SAMPLES, true),
  };
  if (schemaVersion !== SNAPSHOT_SCHEMA_VERSION) {
    return Object.freeze({
      ...head,
      supported: false,
      rowCount: 0,
      lastSlot: firstSlot - 1,
      leaders: [],
      leaderIndex: new Uint16Array(0),
      producersPerSlot: 1,
      producerIndex: new Uint16Array(0),
      rowsText: '',
      rowOffsets: new Uint32Array(1),
    });
  }
  const leadersBytes = dv.getUint32(HDR_LEADERS_BYTES, true);
  const rowsBytes = dv.getUint32(HDR_ROWS_BYTES, true);
  const k = Math.min(MAX_PRODUCERS_PER_SLOT, Math.max(1, dv.getUint32(HDR_PRODUCERS_PER_SLOT, true)));
  const producerIndex = new Uint16Array(rowCount * k);
  for (let i = 0; i < rowCount * k; i++) producerIndex[i] = dv.getUint16(leaderIndexOffset() + i * 2, true);
  // The leaders' own array when K = 1 (every source today): nothing more to copy.
  let leaderIndex = producerIndex;
  if (k > 1) {
    leaderIndex = new Uint16Array(rowCount);
    for (let i = 0; i < rowCount; i++) leaderIndex[i] = producerIndex[i * k];
  }
  const rowOffsets = new Uint32Array(rowCount + 1);
  if (rows) {
    const oo = rowOffsetsOffset(rowCount, k);
    for (let i = 0; i <= rowCount; i++) rowOffsets[i] = dv.getUint32(oo + i * 4, true);
  }
  const sections = sectionsOffset(rowCount, k);
  const buf = Buffer.from(copy.buffer, copy.byteOffset, copy.byteLength);
  const leaders = reader.leadersOf(buf.subarray(sections, sections + leadersBytes));
  const rowsText = rows ? buf.toString('latin1', sections + leadersBytes, sections + leadersBytes + rowsBytes) : '';
  return Object.freeze({
    ...head,
    supported: true,
    rowCount,
    lastSlot: firstSlot + rowCount - 1,
    leaders,
    leaderIndex,
    producersPerSlot: k,
    producerIndex,
    rowsText,
    rowOffsets,
  });
}

/** Every producer of row `i` (the leader first), as indexes into `view.leaders`. Cold or once per slot. */
export function producersOfRow(view: SnapshotView, i: number): number[] {
  const k = view.producersPerSlot;
  const out: number[] = [];
  for (let j = 0; j < k; j++) {
    const li = view.producerIndex[i * k + j];
    if (li === NO_PRODUCER) break;
    out.push(li);
  }
  return out;
}

/** Rows [i, i + n) of a view as one JSON fragment "row,row,..." (a V8 sliced string: no copy). */
export function rowsSlice(view: SnapshotView, i: number, n: number): string {
  return view.rowsText.slice(view.rowOffsets[i], view.rowOffsets[i + n] - 1);
}
