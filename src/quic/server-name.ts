// The SNI a QUIC client sends to a TPU at ip:port (Agave's naming). Cold: once per connection.
import { isIPv6 } from 'node:net';

/**
 * The SNI for a TPU at ip:port. IPv4: "{ip}.{port}.sol", exactly what Agave's clients send (tls-utils
 * socket_addr_to_quic_server_name, anza-xyz/agave#7260): a distinct name per server, never a bare IP (rustls
 * refuses an IP as SNI, "Illegal SNI hostname", transport code 306). IPv6: Agave formats the address the same way,
 * which gives "::1.8009.sol"; rustls cannot parse that as a DNS name (a colon is not a hostname character), so a
 * rustls server refuses it. We write the address as one DNS label instead: all eight groups, four hex digits each,
 * joined by "-" (no leading, trailing or doubled hyphen; 39 characters, under the 63 a label allows), zone id dropped:
 * "0000-0000-0000-0000-0000-0000-0000-0001.8009.sol". Servers read only the certificate, not the name.
 */
export function quicServerName(host: string, port: number): string {
  if (!isIPv6(host)) return `${host}.${port}.sol`;
  return `${expandIpv6(host).join('-')}.${port}.sol`;
}

/** The eight 16-bit groups of an IPv6 address as 4-digit lower-case hex (an embedded IPv4 tail is converted). */
function expandIpv6(host: string): string[] {
  let h = host.toLowerCase();
  const zone = h.indexOf('%');
  if (zone >= 0) h = h.slice(0, zone);
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(h);
  if (v4 !== null) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    h = h.slice(0, v4.index) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16);
  }
  const [left, right] = h.includes('::') ? h.split('::') : [h, null];
  const l = left === '' ? [] : left.split(':');
  const r = right === null || right === '' ? [] : right.split(':');
  const groups = right === null ? l : [...l, ...new Array<string>(8 - l.length - r.length).fill('0'), ...r];
  return groups.map((g) => g.padStart(4, '0'));
}
