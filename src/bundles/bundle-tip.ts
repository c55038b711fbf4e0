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

/** Lamports `tx` (bytes[offset..], parsed as `p`) transfers to the accounts in `tipAccounts`. */
export function tipLamports(bytes: Uint8Array, offset: number, p: ParsedTransaction, tipAccounts: ReadonlySet<string>): bigint {
  const keysAt = offset + p.accountKeysOffset;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = offset + p.instructionsOffset;
  let total = 0n;
  for (let ix = 0; ix < p.instructionCount; ix++) {
    const programIndex = bytes[pos++];
    const accounts = compactU16(bytes, pos);
    const accountsAt = accounts.next;
    const data = compactU16(bytes, accountsAt + accounts.value);
    const dataAt = data.next;
    pos = dataAt + data.value;
    if (programIndex >= p.accountKeysCount || !isSystemProgram(bytes, keysAt + programIndex * PUBKEY_BYTES)) continue;
    if (data.value !== TRANSFER_DATA_BYTES || accounts.value < 2) continue;
    if (view.getUint32(dataAt, true) !== TRANSFER_INDEX) continue;
    const to = bytes[accountsAt + 1];
    if (to >= p.accountKeysCount) continue; // loaded through a lookup table: not seen (see header)
    if (tipAccounts.has(encodePubkeyBase58(bytes, keysAt + to * PUBKEY_BYTES))) total += view.getBigUint64(dataAt + 4, true);
  }
  return total;
}
