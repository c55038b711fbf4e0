// The quiche binding shipped inside @matrixai/quic (BoringSSL + quiche via napi), loaded once. We drive quiche
// directly (sans-IO) rather than through @matrixai/quic's high-level classes: see /work/shared/notes/tpu-quic.md.
import { native } from '@matrixai/quic';
import type { Config, Connection, ConnectionError, Header } from '@matrixai/quic/native/types.js';

export const quiche = native.quiche;
export type { Config as QuicheConfig, Connection as QuicheConnection, ConnectionError as QuicheConnectionError };
export type { Header as QuicheHeader };
