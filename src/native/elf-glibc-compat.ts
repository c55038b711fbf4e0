// Build-time rewrite of an ELF shared object's dynamic symbol VERSIONS (cold: run once by scripts/uws-glibc-compat.ts,
// never at run time), so that uWS binaries linked against glibc 2.38 load on older glibc (Debian 12: 2.36).
//
// Why it is enough: the only glibc 2.38 symbols these binaries import are `__isoc23_strtol`, `__isoc23_strtoul`,
// `__isoc23_strtoull` and `__isoc23_sscanf`, which glibc >= 2.38 headers substitute for the classic functions under
// C23 / _GNU_SOURCE. They differ from `strtol` & co only in also accepting a `0b` binary prefix with base 0 or 2.
// The rewrite touches no machine code: each such symbol's name offset is moved 9 bytes into its own string
// (`__isoc23_strtol` -> `strtol`: ELF string tables may be referenced mid-string) and the GLIBC_2.38 version need is
// renamed GLIBC_2.2.5 (name offset and ELF hash), so the dynamic linker binds the classic functions. Everything else
// is checked and refused: another ELF class/endianness, a GLIBC_2.38 symbol that is not an `__isoc23_` alias of a
// known function, or any other version above what we allow.
import { createHash } from 'node:crypto';

const SHT_DYNSYM = 11;
const SHT_GNU_VERNEED = 0x6ffffffe;
const SHT_GNU_VERSYM = 0x6fffffff;
const C23_PREFIX = '__isoc23_';
/** Functions whose C23 variant may be rebound to the classic one (same signature, same result but for `0b`). */
const REBINDABLE = new Set(['strtol', 'strtoul', 'strtoll', 'strtoull', 'sscanf']);

export interface CompatResult {
  readonly image: Uint8Array;
  /** The symbols rebound, e.g. `__isoc23_strtol -> strtol`. */
  readonly rebound: readonly string[];
}

/** The SysV ELF hash of a version name (vna_hash). */
export function elfHash(name: string): number {
  let h = 0;
  for (const c of Buffer.from(name, 'latin1')) {
    h = ((h << 4) + c) >>> 0;
    const g = h & 0xf0000000;
    if (g !== 0) h ^= g >>> 24;
    h = (h & ~g) >>> 0;
  }
  return h;
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

interface Section {
  readonly type: number;
  readonly offset: number;
  readonly size: number;
  readonly link: number;
  readonly info: number;
}

/** Returns the rewritten copy, or the reason it cannot be rewritten (nothing is changed then). */
export function rebindGlibc238(input: Uint8Array): CompatResult | string {
  const b = Buffer.from(input); // a copy: the input is never modified
  if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) return 'not a little-endian ELF64 file';
  const shoff = Number(b.readBigUInt64LE(0x28));
  const shentsize = b.readUInt16LE(0x3a);
  const shnum = b.readUInt16LE(0x3c);
  const sections: Section[] = [];
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    sections.push({
      type: b.readUInt32LE(o + 4),
      offset: Number(b.readBigUInt64LE(o + 24)),
      size: Number(b.readBigUInt64LE(o + 32)),
      link: b.readUInt32LE(o + 40),
      info: b.readUInt32LE(o + 44),
    });
  }
  const dynsym = sections.find((s) => s.type === SHT_DYNSYM);
  const versym = sections.find((s) => s.type === SHT_GNU_VERSYM);
  const verneed = sections.find((s) => s.type === SHT_GNU_VERNEED);
  if (dynsym === undefined || versym === undefined || verneed === undefined) return 'no dynamic symbol versions';
  const dynstr = sections[dynsym.link];
  if (dynstr === undefined) return 'no dynamic string table';
  const str = (at: number): string => {
    const start = dynstr.offset + at;
    const end = b.indexOf(0, start);
    return b.toString('latin1', start, end);
  };

  let glibc238Aux = -1;
  let glibc238Index = -1;
  let glibc225Name = -1;
  let vn = verneed.offset;
  for (let n = 0; n < verneed.info; n++) {
    const file = str(b.readUInt32LE(vn + 4));
    let aux = vn + b.readUInt32LE(vn + 8);
    for (let a = 0; a < b.readUInt16LE(vn + 2); a++) {
      const name = str(b.readUInt32LE(aux + 8));
      if (file === 'libc.so.6' && name === 'GLIBC_2.38') {
        glibc238Aux = aux;
        glibc238Index = b.readUInt16LE(aux + 6);
      } else if (/^GLIBC_2\.(39|[4-9][0-9])/.test(name)) {
        return `needs ${name} from ${file}: not rebindable`;
      }
      if (name === 'GLIBC_2.2.5') glibc225Name = b.readUInt32LE(aux + 8);
      aux += b.readUInt32LE(aux + 12);
    }
    vn += b.readUInt32LE(vn + 12);
  }
  if (glibc238Aux < 0) return 'needs no GLIBC_2.38: nothing to rewrite';
  if (glibc225Name < 0) return 'no GLIBC_2.2.5 version name to bind to';

  const rebound: string[] = [];
  const count = dynsym.size / 24;
  for (let i = 0; i < count; i++) {
    if ((b.readUInt16LE(versym.offset + i * 2) & 0x7fff) !== glibc238Index) continue;
    const at = dynsym.offset + i * 24;
    const name = str(b.readUInt32LE(at));
    const classic = name.slice(C23_PREFIX.length);
    if (!name.startsWith(C23_PREFIX) || !REBINDABLE.has(classic)) return `GLIBC_2.38 symbol ${name} has no classic equivalent`;
    b.writeUInt32LE(b.readUInt32LE(at) + C23_PREFIX.length, at);
    rebound.push(`${name} -> ${classic}`);
  }
  b.writeUInt32LE(elfHash('GLIBC_2.2.5'), glibc238Aux);
  b.writeUInt32LE(glibc225Name, glibc238Aux + 8);
  return { image: new Uint8Array(b.buffer, b.byteOffset, b.byteLength), rebound };
}
