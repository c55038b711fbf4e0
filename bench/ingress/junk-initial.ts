// Junk QUIC v1 Initials for the flood bench and test (bench/test process; cold): a long header quiche can parse (so it
// reaches the relay's accept path), random connection ids, no token, and a payload nobody can decrypt.
import { randomFillSync } from 'node:crypto';

/** One junk Initial of 1,200 bytes (the minimum a client Initial is padded to). */
export function junkInitial(): Buffer {
  const b = Buffer.allocUnsafe(1200);
  randomFillSync(b);
  b[0] = 0xc0 | (b[0] & 0x03); // long header, fixed bit, type Initial, packet-number length bits random
  b.writeUInt32BE(1, 1); // QUIC v1
  b[5] = 8; // DCID length; DCID bytes 6..13 random
  b[14] = 8; // SCID length; SCID bytes 15..22 random
  b[23] = 0; // token length 0
  const rest = 1200 - 26;
  b.writeUInt16BE(0x4000 | rest, 24); // Length (2-byte varint): packet number + payload
  return b;
}
