// getFeeForMessage on the facade (localnet process, main thread; per call, cold). Agave (rpc.rs get_fee_for_message):
// params [message (base64 VersionedMessage), {commitment, minContextSlot}?]; the message is decoded with Agave's
// limits and wording (5464 base64 characters / 4096 bytes by default, scaled with the raw limit like transactions),
// sanitized ("invalid transaction message: index out of bounds"), and priced by the bank at the commitment: 5,000
// lamports per signature plus the prioritization fee (the bank's own fee, src/localnet/wire.ts transactionFee: a v1
// message's config total, a legacy/v0 message's price × limit). Result
// {context, value}: value null when the message's blockhash is not in that bank's window (expired, or newer than it).
// Known differences: Agave ignores trailing bytes after the message and prices a message that names an account
// twice; both are refused here as undecodable / invalid.
import type { MethodHandler } from '../../jsonrpc/dispatch.js';
import { paramsArray } from '../../jsonrpc/params.js';
import { serdeType } from '../../errors/serde-type.js';
import { parseWireTransaction, transactionFee, WireError, type ParsedTx } from '../wire.js';
import { commonConfig, invalidParams, withContext, type FacadeContext } from './context.js';
import { maxEncodedSize } from './tx-param.js';

const MESSAGE_TYPE = 'solana_message::versioned::VersionedMessage';
const BASE64_CHAR = /[A-Za-z0-9+/]/;

/** base64 0.22's DecodeError, as Agave prints it ({e:?}). */
function base64Error(v: string): string | undefined {
  let end = v.length;
  while (end > 0 && v[end - 1] === '=') end--;
  for (let i = 0; i < end; i++) if (!BASE64_CHAR.test(v[i])) return `InvalidByte(${i}, ${v.charCodeAt(i)})`;
  if (v.length % 4 !== 0 || v.length - end > 2) return 'InvalidPadding';
  if (end % 4 === 1) return `InvalidLength(${end})`;
  return undefined;
}

/**
 * The message parsed as the wire parser's transaction, with zeroed signatures: legacy/v0 a signature count and the
 * signatures in front; v1 (0x81) the signatures after the message, its header's count of them.
 */
function parseMessage(message: Buffer): ParsedTx {
  const n = message.length === 0 ? 0 : message[0] & 0x80 ? (message[1] ?? 0) : message[0];
  if (message[0] === 0x81) return parseWireTransaction(Buffer.concat([message, Buffer.alloc(64 * n)]), false);
  // compact-u16 of n (n <= 255 fits two bytes) + n × 64 zero bytes + the message.
  const prefix = n < 0x80 ? Buffer.from([n]) : Buffer.from([(n & 0x7f) | 0x80, n >> 7]);
  return parseWireTransaction(Buffer.concat([prefix, Buffer.alloc(64 * n), message]), false);
}

const getFeeForMessage: MethodHandler<FacadeContext> = (params, ctx) => {
  const p = paramsArray(params, 1, 2);
  const text = p[0];
  if (typeof text !== 'string') throw invalidParams(`Invalid params: invalid type: ${serdeType(text)}, expected a string`);
  const rawMax = ctx.maxTransactionBytes;
  const maxEnc = maxEncodedSize('base64', rawMax);
  if (text.length > maxEnc) throw invalidParams(`base64 encoded ${MESSAGE_TYPE} too large: ${text.length} bytes (max: encoded/raw ${maxEnc}/${rawMax})`);
  const bad = base64Error(text);
  if (bad !== undefined) throw invalidParams(`invalid base64 encoding: ${bad}`);
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length > rawMax) throw invalidParams(`decoded ${MESSAGE_TYPE} too large: ${bytes.length} bytes (max: ${rawMax} bytes)`);
  let parsed: ParsedTx;
  try {
    parsed = parseMessage(bytes);
  } catch (err) {
    if (err instanceof WireError && err.kind === 'invalid') throw invalidParams('invalid transaction message: index out of bounds');
    throw invalidParams(`failed to deserialize ${MESSAGE_TYPE}: ${(err as Error).message}`);
  }
  const cfg = commonConfig(ctx, p[1]);
  const issued = ctx.bank.blockhashSlot(parsed.recentBlockhash);
  const fee = issued !== undefined && issued <= cfg.slot ? Number(transactionFee(parsed)) : null;
  return withContext(cfg.slot, fee);
};

export const feeMethods: ReadonlyArray<readonly [string, MethodHandler<FacadeContext>]> = [['getFeeForMessage', getFeeForMessage]];
