// Sending a text message on a uWS WebSocket without losing bytes (any thread running uWS; HOT: every PubSub
// message). The uWS build we ship (@rjweb/uws 1.5.0, source 2e80461f) has a "long send" shortcut in
// WebSocket::send, taken for a message of 16 KiB or more when nothing is buffered in user space and nothing corked:
// when the kernel takes fewer bytes than the frame header, it buffers the header and DROPS the payload, so the client
// reads a frame header followed by the next frame's bytes (uWebSockets PR #1662 fixed it upstream, 2023-09). It
// happens to any client whose kernel buffer is full, i.e. a slightly slow reader of large account notifications
// (reproduced: 1 MiB messages to a paused `ws` client, "invalid UTF-8" after three). Messages under the threshold take
// the ordinary path; larger ones are sent as fragments below it (RFC 6455 fragmentation: every client reassembles
// them), corked so that they leave in as few writes as the kernel allows.
import type { WebSocket } from 'uWebSockets.js';

/** uWS's shortcut threshold (message.length() >= 16 * 1024). */
const SHORTCUT_BYTES = 16 * 1024;
/** Fragment payload size: under the threshold, and a frame fits uWS's 16 KiB cork buffer. */
const FRAGMENT_BYTES = 16_000;
/** A string this long or shorter is under the threshold whatever its characters (UTF-8: at most 3 bytes per UTF-16 unit). */
const SURELY_SHORT_CHARS = Math.floor((SHORTCUT_BYTES - 1) / 3);

/** The fragment calls uWS.js has at runtime but leaves out of its typings. */
interface FragmentSends {
  sendFirstFragment(message: Uint8Array, isBinary?: boolean, compress?: boolean): number;
  sendFragment(message: Uint8Array, compress?: boolean): number;
  sendLastFragment(message: Uint8Array, compress?: boolean): number;
}

/** Sends `text` as one text message; returns uWS's send status of the last frame (0 backpressure, 1 ok, 2 dropped). */
export function sendText<U>(ws: WebSocket<U>, text: string): number {
  if (text.length <= SURELY_SHORT_CHARS) return ws.send(text, false);
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length < SHORTCUT_BYTES) return ws.send(bytes, false);
  const f = ws as unknown as FragmentSends;
  let status = 1;
  ws.cork(() => {
    f.sendFirstFragment(bytes.subarray(0, FRAGMENT_BYTES), false);
    let at = FRAGMENT_BYTES;
    for (; at + FRAGMENT_BYTES < bytes.length; at += FRAGMENT_BYTES) f.sendFragment(bytes.subarray(at, at + FRAGMENT_BYTES));
    status = f.sendLastFragment(bytes.subarray(at));
  });
  return status;
}
