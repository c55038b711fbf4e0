// Public surface of the QUIC foundation (egress client, the localnet's TPU endpoint, QUIC ingress). Cold: imports only.
export * from './constants.js';
export { base58Encode, base58Decode } from './base58.js';
export {
  createIdentityCertificate,
  createRandomIdentityCertificate,
  ed25519KeyFromCertificate,
  identityFromCertificate,
  type IdentityCertificate,
} from './identity-certificate.js';
export type { QuicCloseInfo } from './close-info.js';
export type { CongestionControl } from './quiche-config.js';
export {
  QuicClientConnection,
  type QuicClientOptions,
  type QuicClientState,
  type QuicClientStats,
} from './client-connection.js';
export { quicServerName } from './server-name.js';
