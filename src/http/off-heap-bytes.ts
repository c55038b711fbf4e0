// Constant strings handed to uWS on every request (header names and values, status lines), encoded once.
// A JS string argument is measured and transcoded into a malloc'd buffer on every native call
// (v8::String::Utf8Value: Utf8Length + WriteUtf8 were among the front thread's top native costs under load); bytes
// are read in place. An ArrayBuffer rather than a typed array: uWS then skips the view-to-buffer step (getHeader
// with an ArrayBuffer name ~50 ns, a Uint8Array ~55 ns, a string ~65-90 ns, scratch server), and an ArrayBuffer's
// memory is always outside the V8 heap, where no GC moves it while native code holds its address.
export function offHeapBytes(text: string): ArrayBuffer {
  const bytes = new ArrayBuffer(Buffer.byteLength(text, 'utf8'));
  Buffer.from(bytes).write(text, 'utf8');
  return bytes;
}
