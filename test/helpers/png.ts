// A minimal PNG reader for screenshot checks: 8-bit RGB or RGBA, not interlaced (what Chromium's --screenshot
// writes). Returns RGBA pixels; anything else throws rather than guessing.
import { inflateSync } from 'node:zlib';

export interface Image {
  readonly width: number;
  readonly height: number;
  /** RGBA, row-major. */
  readonly data: Uint8Array;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

export function decodePng(buf: Buffer): Image {
  if (!buf.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  let off = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const body = buf.subarray(off + 8, off + 8 + len);
    off += 12 + len;
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const depth = body[8];
      const colorType = body[9];
      if (depth !== 8 || (colorType !== 2 && colorType !== 6) || body[12] !== 0) throw new Error(`unsupported PNG: depth ${depth}, colour type ${colorType}, interlace ${body[12]}`);
      channels = colorType === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') break;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = new Uint8Array(width * height * 4);
  let prev = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const cur = new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? cur[i - channels] : 0;
      const b = prev[i];
      const c = i >= channels ? prev[i - channels] : 0;
      const x = line[i];
      cur[i] = filter === 0 ? x : filter === 1 ? x + a : filter === 2 ? x + b : filter === 3 ? x + ((a + b) >> 1) : x + paeth(a, b, c);
    }
    for (let px = 0; px < width; px++) {
      const o = (y * width + px) * 4;
      out[o] = cur[px * channels];
      out[o + 1] = cur[px * channels + 1];
      out[o + 2] = cur[px * channels + 2];
      out[o + 3] = channels === 4 ? cur[px * channels + 3] : 255;
    }
    prev = cur;
  }
  return { width, height, data: out };
}

export interface Box {
  readonly x0: number;
  readonly y0: number;
  readonly x1: number;
  readonly y1: number;
}

export function hexRgb(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function near(img: Image, i: number, rgb: readonly number[], tol: number): boolean {
  return Math.abs(img.data[i] - rgb[0]) <= tol && Math.abs(img.data[i + 1] - rgb[1]) <= tol && Math.abs(img.data[i + 2] - rgb[2]) <= tol;
}

/** Bounding boxes of the rectangles filled with exactly `hex`, as runs of rows (a gap of > 8 rows starts a new box). */
export function boxesOf(img: Image, hex: string): Box[] {
  const rgb = hexRgb(hex);
  const boxes: { x0: number; y0: number; x1: number; y1: number }[] = [];
  let cur: { x0: number; y0: number; x1: number; y1: number } | undefined;
  for (let y = 0; y < img.height; y++) {
    let minX = -1;
    let maxX = -1;
    let count = 0;
    for (let x = 0; x < img.width; x++) {
      if (!near(img, (y * img.width + x) * 4, rgb, 0)) continue;
      count++;
      if (minX < 0) minX = x;
      maxX = x;
    }
    if (count < 50) continue; // a row of the panel has hundreds of background pixels; text anti-aliasing has few
    if (cur !== undefined && y - cur.y1 <= 8) {
      cur.x0 = Math.min(cur.x0, minX);
      cur.x1 = Math.max(cur.x1, maxX);
      cur.y1 = y;
    } else {
      cur = { x0: minX, y0: y, x1: maxX, y1: y };
      boxes.push(cur);
    }
  }
  return boxes;
}

export interface ColourStats {
  readonly count: number;
  /** Extent of the matching pixels (undefined when none). */
  readonly box?: Box;
}

/** Pixels within `box` whose colour is within `tol` per channel of `hex`. */
export function colourIn(img: Image, box: Box, hex: string, tol = 8): ColourStats {
  const rgb = hexRgb(hex);
  let count = 0;
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -1;
  let y1 = -1;
  for (let y = box.y0; y <= box.y1; y++) {
    for (let x = box.x0; x <= box.x1; x++) {
      if (!near(img, (y * img.width + x) * 4, rgb, tol)) continue;
      count++;
      x0 = Math.min(x0, x);
      y0 = Math.min(y0, y);
      x1 = Math.max(x1, x);
      y1 = Math.max(y1, y);
    }
  }
  return count === 0 ? { count } : { count, box: { x0, y0, x1, y1 } };
}
