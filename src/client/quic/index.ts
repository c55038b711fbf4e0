// `slotrelay/client/quic`, the QUIC transport's package entry (package.json exports "./client/quic" -> the emitted
// dist/src/client/quic/index.js and its .d.ts). Separate from `slotrelay/client` because it needs quiche
// (@matrixai/quic's native binding) and msgpackr; an HTTP-only user never loads them. Reaches the client's files and
// the QUIC client files it shares with the relay's ingress tests (src/client/quic/ingress-client.ts, src/quic/), and no
// other package (test/unit/client/import-graph.test.ts). Usage: docs/client.md, "QUIC transport".
export { quicTransport, QuicTransport, DEFAULT_QUIC_PORT, type QuicTransportOptions } from './quic-transport.js';
export { createKeyCertificate } from './key-certificate.js';
export { CONNECTION_CODE, STREAM_CODE } from '../../ingress/codes.js';
