// The leader-slot snapshot's shared-memory layout, every offset in one module (the pino thread-stream `indexes.js`
// pattern). The telemetry thread (writer) and the front thread / egress workers (readers) import it; MAGIC and
// LAYOUT_VERSION are checked when a side attaches. Cold: constants only.
//
// One SharedArrayBuffer: a control block, then two data buffers (double buffer, each guarded by its own seqlock word).
//
//   bytes 0..255   control words (Int32Array `ctl`), hot words on their own 64-byte cache lines
//     ctl[0] MAGIC, ctl[1] LAYOUT_VERSION, ctl[2] capacity of ONE data buffer in bytes
//     ctl[16] PUBLISHED  generations published so far (u32, free running; 0 = nothing yet). Generation g lives in
//                        buffer (g - 1) & 1, so the writer always fills the buffer readers are NOT being sent to.
//     ctl[32] SEQ0 / ctl[33] LEN0   seqlock word (odd while the writer fills it) and payload length of buffer 0
//     ctl[48] SEQ1 / ctl[49] LEN1   the same for buffer 1
//   bytes 256..              buffer 0 (capacity bytes), then buffer 1
//
// A reader loads PUBLISHED, picks that generation's buffer, reads SEQ (must be even), copies the payload, re-reads
// SEQ: equal means the copy is a whole snapshot. The writer only touches a published buffer again two publishes later,
// so a retry is rare (a reader stalled for a whole publish period).
//
// Payload = fixed binary header + sections. Why a fixed binary layout and not msgpackr: readers need three header
// fields (schema version, snapshot slot, generation time) before deciding anything, and the egress scheduler needs
// O(1) "leader of slot S" (a u16 index per slot) without decoding a document; the only structured parts are text
// that is already JSON (leader table, rows), decoded once per generation per reader. msgpackr would add a decode
// of the whole payload for no gain.
//
//   0  u32 schemaVersion          version of the row schema (docs/get-leader-slots.md); readers check it per call
//   4  u32 rowCount               slots covered: firstSlot .. firstSlot + rowCount - 1
//   8  f64 firstSlot
//   16 f64 snapshotSlot           the cluster's slot when the snapshot was built
//   24 f64 generatedAtUnixMs      Date.now() at build time
//   32 f64 slotMs                 the cluster's slot duration (ms) as the telemetry thread measured it, or the
//                                 documented fallback while slotMsSamples is 0 (docs/slot-time.md)
//   40 u32 leaderCount
//   44 u32 leadersBytes           UTF-8 JSON [[identity, tpuQuic|null, stake], ...] (index = leader index)
//   48 u32 rowsBytes              ASCII rows text: every row's JSON, joined with ','
//   52 u32 slotMsSamples          slot advances behind slotMs; 0 = nothing measured yet, slotMs is the fallback
//                                 (was "reserved (0)": a writer that predates it reads as "not measured")
//   56 u32 producersPerSlot       K >= 1: the block producers each slot may have (issue #44 item 5: several
//                                 concurrent proposers are designed, not scheduled; every source gives K = 1 today)
//   60 u32 reserved (0)
//   64 u16 leaderIndex[rowCount * K]  row i's producers at i*K .. i*K+K-1, the first always set, the others
//                                 NO_PRODUCER when the slot has fewer; then padding to 4 bytes
//   .. u32 rowOffset[rowCount + 1]  char offset of row i in the rows text; rowOffset[rowCount] = rowsBytes + 1
//   .. leaders JSON, then rows text

export const SNAPSHOT_MAGIC = 0x534c5453; // 'SLTS'
export const SNAPSHOT_LAYOUT_VERSION = 2; // 2: producersPerSlot, K leader indexes per row (issue #44)
/** The row schema this build writes and serves (docs/get-leader-slots.md). */
export const SNAPSHOT_SCHEMA_VERSION = 1;

export const SNAP_CTL_BYTES = 256;
export const SNAP_CTL_MAGIC = 0;
export const SNAP_CTL_VERSION = 1;
export const SNAP_CTL_CAPACITY = 2;
export const SNAP_CTL_PUBLISHED = 16;
export const SNAP_CTL_SEQ = [32, 48] as const;
export const SNAP_CTL_LEN = [33, 49] as const;

export const HDR_SCHEMA_VERSION = 0;
export const HDR_ROW_COUNT = 4;
export const HDR_FIRST_SLOT = 8;
export const HDR_SNAPSHOT_SLOT = 16;
export const HDR_GENERATED_AT = 24;
export const HDR_SLOT_MS = 32;
export const HDR_LEADER_COUNT = 40;
export const HDR_LEADERS_BYTES = 44;
export const HDR_ROWS_BYTES = 48;
export const HDR_SLOT_MS_SAMPLES = 52;
export const HDR_PRODUCERS_PER_SLOT = 56;
export const HDR_BYTES = 64;

/** A row's producer entry beyond the slot's last producer. */
export const NO_PRODUCER = 0xffff;
/** Producers per slot a snapshot may carry (K): room for a few concurrent proposers. */
export const MAX_PRODUCERS_PER_SLOT = 4;

/** Leader indexes are u16: at most this many distinct leaders in one snapshot (a real horizon has a few hundred). */
export const MAX_LEADERS = NO_PRODUCER;

/** Default capacity of one data buffer: 4 MiB holds ~5,000 rows of ~700 bytes. */
export const DEFAULT_SNAPSHOT_CAPACITY = 4 << 20;

export function leaderIndexOffset(): number {
  return HDR_BYTES;
}

export function rowOffsetsOffset(rowCount: number, producersPerSlot = 1): number {
  return (HDR_BYTES + rowCount * producersPerSlot * 2 + 3) & ~3;
}

export function sectionsOffset(rowCount: number, producersPerSlot = 1): number {
  return rowOffsetsOffset(rowCount, producersPerSlot) + (rowCount + 1) * 4;
}

export function bufferBase(index: number, capacity: number): number {
  return SNAP_CTL_BYTES + index * capacity;
}

export function createSnapshotBuffer(capacity = DEFAULT_SNAPSHOT_CAPACITY): SharedArrayBuffer {
  if (!Number.isInteger(capacity) || capacity < 1024 || capacity % 8 !== 0) {
    throw new RangeError(`snapshot capacity must be a multiple of 8 and at least 1024, got ${capacity}`);
  }
  const sab = new SharedArrayBuffer(SNAP_CTL_BYTES + 2 * capacity);
  const ctl = new Int32Array(sab, 0, SNAP_CTL_BYTES >> 2);
  ctl[SNAP_CTL_MAGIC] = SNAPSHOT_MAGIC;
  ctl[SNAP_CTL_VERSION] = SNAPSHOT_LAYOUT_VERSION;
  ctl[SNAP_CTL_CAPACITY] = capacity;
  return sab;
}

/** Check MAGIC and LAYOUT_VERSION; returns the control words and the per-buffer capacity. */
export function attachSnapshotBuffer(sab: SharedArrayBuffer): { ctl: Int32Array; capacity: number } {
  if (!(sab instanceof SharedArrayBuffer) || sab.byteLength < SNAP_CTL_BYTES) throw new Error('not a snapshot buffer');
  const ctl = new Int32Array(sab, 0, SNAP_CTL_BYTES >> 2);
  if (Atomics.load(ctl, SNAP_CTL_MAGIC) !== SNAPSHOT_MAGIC) throw new Error('snapshot buffer: bad magic');
  const v = Atomics.load(ctl, SNAP_CTL_VERSION);
  if (v !== SNAPSHOT_LAYOUT_VERSION) throw new Error(`snapshot buffer: layout version ${v}, this build reads ${SNAPSHOT_LAYOUT_VERSION}`);
  const capacity = Atomics.load(ctl, SNAP_CTL_CAPACITY);
  if (sab.byteLength !== SNAP_CTL_BYTES + 2 * capacity) throw new Error('snapshot buffer: size does not match its capacity');
  return { ctl, capacity };
}
