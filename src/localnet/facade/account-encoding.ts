// Agave's UiAccount rendering for the facade's account reads (localnet process, main thread; per call, cold):
// getAccountInfo (default encoding binary) and getMultipleAccounts (default base64). Encodings binary (a bare base58
// string), base58, base64, base64+zstd, jsonParsed (no program parsers here: Agave's fallback, base64); dataSlice;
// Agave's refusals (base58 over 128 bytes, a slice with jsonParsed). rentEpoch u64::MAX is written as Agave writes it.
import bs58 from 'bs58';
import { Errors, RelayError } from '../../errors/registry.js';
import { configObject, optionalUsize } from '../../jsonrpc/params.js';
import { serdeType } from '../../errors/serde-type.js';
import { invalidParams } from './context.js';

/** Agave MAX_BASE58_BYTES: base58 account data is refused above this (after slicing). */
const MAX_BASE58_BYTES = 128;
const ENCODINGS = ['binary', 'base58', 'base64', 'jsonParsed', 'base64+zstd'] as const;
export type AccountEncoding = (typeof ENCODINGS)[number];

/** The account as the facade's bank hands it out (litesvm's account view). */
export interface BankAccount {
  data(): Uint8Array;
  executable(): boolean;
  lamports(): bigint;
  owner(): Uint8Array;
  rentEpoch(): bigint;
}

export interface AccountRender {
  readonly encoding: AccountEncoding;
  readonly slice: { readonly offset: number; readonly length: number } | undefined;
}

/** encoding + dataSlice of an RpcAccountInfoConfig, checked as Agave does (serde, then check_slice_and_encoding). */
export function accountRender(raw: Record<string, unknown>, defaultEncoding: AccountEncoding): AccountRender {
  const e = raw.encoding ?? defaultEncoding;
  if (typeof e !== 'string' || !(ENCODINGS as readonly string[]).includes(e)) {
    const what = typeof e === 'string' ? `unknown variant \`${e}\`` : `invalid type: ${serdeType(e)}`;
    throw invalidParams(`Invalid params: ${what}, expected one of \`binary\`, \`base58\`, \`base64\`, \`jsonParsed\`, \`base64+zstd\``);
  }
  const s = configObject(raw.dataSlice);
  const slice = s === undefined ? undefined : { offset: optionalUsize(s.offset, 'offset') ?? 0, length: optionalUsize(s.length, 'length') ?? 0 };
  if (slice !== undefined && e === 'jsonParsed') {
    // Agave answers this one with InvalidRequest (-32600), not InvalidParams.
    throw new RelayError(Errors.INVALID_REQUEST, 'Sliced account data can only be encoded using binary (base 58) or base64 encoding.');
  }
  return { encoding: e as AccountEncoding, slice };
}

/**
 * A zstd frame (RFC 8878) holding `data` in raw (stored) blocks: what base64+zstd needs, decodable by any zstd
 * decoder, without a compressor (Node 20 has none). Agave compresses; the decompressed bytes are the same.
 */
export function zstdStoredFrame(data: Uint8Array): Buffer {
  const BLOCK = 128 * 1024;
  const blocks = Math.max(1, Math.ceil(data.length / BLOCK));
  const out = Buffer.alloc(4 + 1 + 4 + blocks * 3 + data.length);
  out.writeUInt32LE(0xfd2fb528, 0); // magic
  out[4] = 0xa0; // Frame_Header_Descriptor: Frame_Content_Size 4 bytes, Single_Segment, no checksum, no dictionary
  out.writeUInt32LE(data.length, 5);
  let at = 9;
  for (let i = 0; i < blocks; i++) {
    const part = data.subarray(i * BLOCK, Math.min(data.length, (i + 1) * BLOCK));
    const last = i === blocks - 1 ? 1 : 0;
    const header = (part.length << 3) | (0 << 1) | last; // Block_Type 0 = Raw_Block
    out[at] = header & 0xff;
    out[at + 1] = (header >>> 8) & 0xff;
    out[at + 2] = (header >>> 16) & 0xff;
    out.set(part, at + 3);
    at += 3 + part.length;
  }
  return out;
}

/** Agave's UiAccount of `a` (data sliced and encoded as asked). */
export function uiAccount(a: BankAccount, r: AccountRender): Record<string, unknown> {
  const full = a.data();
  const data = r.slice === undefined ? full : full.subarray(r.slice.offset, r.slice.offset + r.slice.length);
  let dataJson: unknown;
  switch (r.encoding) {
    case 'binary':
    case 'base58':
      if (data.length > MAX_BASE58_BYTES) throw invalidParams('Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.');
      dataJson = r.encoding === 'binary' ? bs58.encode(data) : [bs58.encode(data), 'base58'];
      break;
    case 'base64+zstd':
      dataJson = [zstdStoredFrame(data).toString('base64'), 'base64+zstd'];
      break;
    default: // base64, and jsonParsed: no parser here, Agave falls back to base64 for accounts it cannot parse
      dataJson = [Buffer.from(data.buffer, data.byteOffset, data.length).toString('base64'), 'base64'];
  }
  const rentEpoch = a.rentEpoch();
  return {
    data: dataJson,
    executable: a.executable(),
    lamports: Number(a.lamports()),
    owner: bs58.encode(a.owner()),
    rentEpoch: rentEpoch >= 2n ** 64n - 1n ? RENT_EXEMPT_EPOCH_NUMBER : Number(rentEpoch),
    space: full.length,
  };
}

/** u64::MAX as a JS number: JSON.stringify writes it 18446744073709552000, which accountsJson corrects. */
const RENT_EXEMPT_EPOCH_NUMBER = 18446744073709551615;

/** JSON text of a value holding UiAccounts, with u64::MAX rent epochs written as Agave writes them. */
export function accountsJson(value: unknown): string {
  return JSON.stringify(value).replaceAll('"rentEpoch":18446744073709552000', '"rentEpoch":18446744073709551615');
}
