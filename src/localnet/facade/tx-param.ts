// Decoding the transaction parameter of sendTransaction / simulateTransaction with Agave's limits and wording
// (localnet process, main thread; per call). Encoded-size limits scale with the raw limit (4096 by default since
// SIMD-0296, 1232 before): base58 ceil(n × log 256 / log 58) = 5594 for 4096 (1683 for 1232), base64 4 × ceil(n / 3)
// = 5464 for 4096 (1644 for 1232) — our decision, as Yellowstone Jet does. Once decoded, the format's own cap
// applies: a legacy or v0 transaction over 1232 bytes is "decoded ... too large: N bytes (max: 1232 bytes)".
import bs58 from 'bs58';
import { Errors, RelayError } from '../../errors/registry.js';
import { parseWireTransaction, WireError, wireFormatOf, type ParsedTx } from '../wire.js';
import { invalidParams } from './context.js';

const TX_TYPE = 'solana_transaction::versioned::VersionedTransaction';
const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

export function maxEncodedSize(encoding: 'base58' | 'base64', rawMax: number): number {
  return encoding === 'base64' ? 4 * Math.ceil(rawMax / 3) : Math.ceil((rawMax * Math.log(256)) / Math.log(58));
}

/** Agave's encoding config: absent / "base58" / "binary" -> base58; "base64"; json/jsonParsed refused. */
export function txEncoding(v: unknown): 'base58' | 'base64' {
  if (v === undefined || v === null || v === 'base58' || v === 'binary') return 'base58';
  if (v === 'base64') return 'base64';
  if (v === 'json' || v === 'jsonParsed') throw invalidParams(`unsupported encoding: ${v}. Supported encodings: base58, base64`);
  throw invalidParams(`Invalid params: unknown variant \`${String(v)}\`, expected one of \`binary\`, \`base64\`, \`base58\`, \`json\`, \`jsonParsed\``);
}

export interface DecodedTx {
  readonly bytes: Uint8Array;
  readonly parsed: ParsedTx;
}

export function decodeTxParam(v: unknown, encoding: 'base58' | 'base64', rawMax: number): DecodedTx {
  if (typeof v !== 'string') throw invalidParams('Invalid params: invalid type: expected a string');
  const maxEnc = maxEncodedSize(encoding, rawMax);
  if (v.length > maxEnc) {
    throw new RelayError(Errors.TX_TOO_LARGE_ENCODED, `${encoding} encoded ${TX_TYPE} too large: ${v.length} bytes (max: encoded/raw ${maxEnc}/${rawMax})`);
  }
  let bytes: Uint8Array;
  if (encoding === 'base64') {
    if (!BASE64_RE.test(v) || v.length % 4 !== 0) throw new RelayError(Errors.TX_BAD_ENCODING, `invalid base64 encoding: InvalidByte(0, ${v.charCodeAt(0) || 0})`);
    bytes = Buffer.from(v, 'base64');
  } else {
    try {
      bytes = bs58.decode(v);
    } catch {
      throw new RelayError(Errors.TX_BAD_ENCODING, 'invalid base58 encoding: InvalidCharacter');
    }
  }
  // The format's cap (legacy/v0 1232, v1 4096) below the configured one; an unknown first byte fails to parse below.
  const max = Math.min(rawMax, wireFormatOf(bytes[0] ?? 0)?.maxBytes ?? rawMax);
  if (bytes.length > max) {
    throw new RelayError(Errors.TX_TOO_LARGE_DECODED, `decoded ${TX_TYPE} too large: ${bytes.length} bytes (max: ${max} bytes)`);
  }
  try {
    return { bytes, parsed: parseWireTransaction(bytes) };
  } catch (err) {
    if (err instanceof WireError && err.kind === 'invalid') throw new RelayError(Errors.TX_INVALID, err.message);
    throw new RelayError(Errors.TX_UNDECODABLE, `failed to deserialize ${TX_TYPE}: ${(err as Error).message}`);
  }
}
