// How a quiche connection ended, as one plain object for logs, metrics and tests. Cold: once per connection.
import type { QuicheConnection } from './quiche.js';

export interface QuicCloseInfo {
  /** 'peer': the other side sent CONNECTION_CLOSE; 'local': we did; 'idle': idle timeout; 'handshake-timeout',
   * 'unreachable' (ICMP port unreachable) or 'socket' (socket error) when no CLOSE frame was exchanged. */
  readonly by: 'peer' | 'local' | 'idle' | 'handshake-timeout' | 'unreachable' | 'socket';
  /** true: application close code (Agave TPU codes 1-5); false: QUIC transport / TLS code (0x100+alert). */
  readonly isApp: boolean;
  readonly code: number;
  readonly reason: string;
  /** Whether the handshake had completed before the close. */
  readonly wasEstablished: boolean;
}

const decoder = new TextDecoder();

export function closeInfoOf(
  conn: QuicheConnection,
  wasEstablished: boolean,
  fallback: QuicCloseInfo['by'] = 'local',
): QuicCloseInfo {
  const peer = conn.peerError();
  if (peer !== null) {
    return { by: 'peer', isApp: peer.isApp, code: peer.errorCode, reason: decoder.decode(peer.reason), wasEstablished };
  }
  const local = conn.localError();
  if (local !== null) {
    return { by: 'local', isApp: local.isApp, code: local.errorCode, reason: decoder.decode(local.reason), wasEstablished };
  }
  if (conn.isTimedOut()) return { by: 'idle', isApp: false, code: 0, reason: 'idle timeout', wasEstablished };
  return { by: fallback, isApp: false, code: 0, reason: fallback, wasEstablished };
}
