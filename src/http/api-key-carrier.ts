// The key a request carries, from the spec's four carriers (front thread, HOT: once per request). Reading it is
// request plumbing; whether it is a key is the key table's question (src/admission/key-table.ts).
/**
 * The key a request carries, from the first carrier present in the spec's order: x-token, x-api-key,
 * Authorization: Bearer, ?key=. An Authorization header with another scheme (Basic, a proxy's own token...) is not a
 * key carrier, so it does not hide a `?key=`. Must be called synchronously inside the uWS handler (headers die after
 * it returns).
 */
export function extractKey(xToken: string, xApiKey: string, authorization: string, queryKey: string): string {
  if (xToken !== '') return xToken.trim();
  if (xApiKey !== '') return xApiKey.trim();
  if (authorization !== '') {
    const a = authorization.trim();
    if (a.length > 7 && a.slice(0, 7).toLowerCase() === 'bearer ') return a.slice(7).trim();
  }
  return queryKey;
}
