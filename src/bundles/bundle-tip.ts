// How much a transaction tips the bundle service (front thread; per bundle transaction, cold relative to the send
// path): the lamports its system-program Transfer instructions move to one of the service's tip accounts. Reads
// the wire bytes at the offsets our intake's parser found (src/tx/parse-transaction.ts), after the transaction
// passed it, so the layout is known to be well-formed. Only static account keys count as destinations (a tip account
// loaded through an address lookup table is not seen: documented in docs/bundles.md).
import type { ParsedTransaction } from '../tx/parse-transaction.js';
import { encodePubkeyBase58 } from '../tx/base58.js';

const PUBKEY_BYTES = 32;
/** SystemInstruction::Transfer: u32 LE 2, then u64 LE lamports. */
const TRANSFER_INDEX = 2;
const TRANSFER_DATA_BYTES = 12;

function isSystemProgram(bytes: Uint8Array, at: number): boolean {
  for (let i = 0; i < PUBKEY_BYTES; i++) if (bytes[at + i] !== 0) return false;
  return true;
}

/** solana-short-vec, on bytes already validated by the parser. */
function compactU16(bytes: Uint8Array, at: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  let pos = at;
  for (;;) {
    const b = bytes[pos++];
    value |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) return { value, next: pos };
    shift += 7;
  }
}

/** One instruction's program index, account indexes and data, wherever the layout puts them. */
interface InstructionAt {
  programIndex: number;
  accountsAt: number;
  accountCount: number;
  dataAt: number;
  dataLength: number;
}

/**
 * Calls `visit` for each instruction. Legacy/v0: program u8, compact-u16 account count, accounts, compact-u16 data
 * length, data. v1: fixed 4-byte headers (program, account count, u16 LE data length) for all instructions first,
 * then each one's accounts and data (src/tx/parse-v1-transaction.ts).
 */
function forEachInstruction(bytes: Uint8Array, offset: number, p: ParsedTransaction, visit: (ix: InstructionAt) => void): void {
  const ix: InstructionAt = { programIndex: 0, accountsAt: 0, accountCount: 0, dataAt: 0, dataLength: 0 };
  if (p.version === 1) {
    const headersAt = offset + p.instructionsOffset;
    let pos = headersAt + p.instructionCount * 4;
    for (let i = 0; i < p.instructionCount; i++) {
      const h = headersAt + i * 4;
      ix.programIndex = bytes[h];
      ix.accountCount = bytes[h + 1];
      ix.dataLength = bytes[h + 2] | (bytes[h + 3] << 8);
      ix.accountsAt = pos;
      ix.dataAt = pos + ix.accountCount;
      pos = ix.dataAt + ix.dataLength;
      visit(ix);
    }
    return;
  }
  let pos = offset + p.instructionsOffset;
  for (let i = 0; i < p.instructionCount; i++) {
    ix.programIndex = bytes[pos++];
    const accounts = compactU16(bytes, pos);
    ix.accountsAt = accounts.next;
    ix.accountCount = accounts.value;
    const data = compactU16(bytes, ix.accountsAt + accounts.value);
    ix.dataAt = data.next;
    ix.dataLength = data.value;
    pos = ix.dataAt + ix.dataLength;
    visit(ix);
  }
}

/** Lamports `tx` (bytes[offset..], parsed as `p`, any version) transfers to the accounts in `tipAccounts`. */
export function tipLamports(bytes: Uint8Array, offset: number, p: ParsedTransaction, tipAccounts: ReadonlySet<string>): bigint {
  const keysAt = offset + p.accountKeysOffset;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let total = 0n;
  forEachInstruction(bytes, offset, p, ({ programIndex, accountsAt, accountCount, dataAt, dataLength }) => {
    if (programIndex >= p.accountKeysCount || !isSystemProgram(bytes, keysAt + programIndex * PUBKEY_BYTES)) return;
    if (dataLength !== TRANSFER_DATA_BYTES || accountCount < 2) return;
    if (view.getUint32(dataAt, true) !== TRANSFER_INDEX) return;
    const to = bytes[accountsAt + 1];
    if (to >= p.accountKeysCount) return; // loaded through a lookup table: not seen (see header)
    if (tipAccounts.has(encodePubkeyBase58(bytes, keysAt + to * PUBKEY_BYTES))) total += view.getBigUint64(dataAt + 4, true);
  });
  return total;
}
