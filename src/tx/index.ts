// Transaction intake API in one place (front thread and ingress import from here; HOT functions, no state of its own).
export {
  BASE58_ALPHABET,
  Base58DecodeError,
  decodeBase58Into,
  describeInvalidBase58,
  encodePubkeyBase58,
  encodeSignatureBase58,
  findInvalidBase58,
} from './base58.js';
export {
  VERSIONED_TRANSACTION_TYPE,
  canonicalBase64Length,
  decodeTransactionInto,
  describeBase64Error,
  maxEncodedLengths,
  parseEncodingParam,
  tryDecodeTransactionInto,
  tryParseEncodingParam,
  type EncodedLimits,
  type TransactionEncoding,
} from './decode-transaction-string.js';
export {
  MESSAGE_VERSION_PREFIX,
  PUBKEY_BYTES,
  SIGNATURE_BYTES,
  createParsedTransaction,
  parseTransaction,
  tryParseTransaction,
  type ParsedTransaction,
} from './parse-transaction.js';
export {
  KEY_CACHE_CAPACITY,
  clearKeyCache,
  ed25519KeyObject,
  keyCacheSize,
  verifyTransactionSignatures,
} from './verify-signatures.js';
