// Constant strings handed to uWS on every request (header names and values, status lines), encoded once.
// A JS string argument is measured and transcoded into a malloc'd buffer on every native call
// (v8::String::Utf8Value: Utf8Length + WriteUtf8 were among the front thread's top native costs under load); bytes
// are read in place. Off-heap memory of their own (allocUnsafeSlow): a typed array of <= 64 bytes made with
// `new Uint8Array(...)` lives inside the V8 heap, where a GC may move it while native code holds its address.
export function offHeapBytes(text: string): Uint8Array {
  const b = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
  b.write(text, 'utf8');
  return b;
}
