// Kernel buffer sizes of the QUIC UDP sockets (any thread that owns one; cold: once per socket). With Linux's default
// 208 KiB receive buffer a listener that is busy for a few milliseconds (a GC pause, a burst of egress sends in the
// same thread) drops datagrams in the kernel: the peer's congestion controller reads them as loss, its window
// collapses and every stream behind waits for retransmits (measured: 7% of a bidi client's packets lost at 5,000
// requests/s on loopback, answers' p50 60 ms; /proc/net/snmp RcvbufErrors). Agave asks validators for 128 MiB
// (net.core.rmem_max / rmem_default); we ask for what a socket of its role needs and the kernel caps the request at
// net.core.rmem_max / wmem_max (Linux then doubles it for its own bookkeeping). docs/quic-ingress.md "Socket buffers".
import type dgram from 'node:dgram';

/** Listeners (the QUIC ingress, the localnet's TPU): every client's datagrams land in this one socket. */
export const SERVER_SOCKET_BUFFER_BYTES = 8 * 1024 * 1024;
/** One client connection's socket (an egress leader connection, the library's ingress client): one peer's datagrams. */
export const CLIENT_SOCKET_BUFFER_BYTES = 2 * 1024 * 1024;

/** dgram.createSocket options asking for `bytes` both ways (applied by Node at bind/connect; capped by the kernel). */
export function socketBufferOptions(bytes: number): { recvBufferSize: number; sendBufferSize: number } {
  return { recvBufferSize: bytes, sendBufferSize: bytes };
}

/** What the kernel granted a bound socket (bytes, as getsockopt reports them: twice the usable size on Linux). */
export function grantedBuffers(sock: dgram.Socket): { recv: number; send: number } {
  return { recv: sock.getRecvBufferSize(), send: sock.getSendBufferSize() };
}
