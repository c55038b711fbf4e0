// A URL as it may appear in logs and printed lines (cold). Providers put API keys in the query string (`?api-key=`,
// Helius), the userinfo, or a path segment (QuickNode's `/<40 hex>/`, Triton's `/<token>`): none of those may be
// logged. Origin and the path's word-like segments are kept; a segment shaped like a token is replaced.

/** A path segment that may be a token: long, or holding a run of 8 hexadecimal characters (UUIDs, hex keys). */
function tokenLike(segment: string): boolean {
  return segment.length >= 16 || /[0-9a-f]{8}/i.test(segment);
}

export function urlForLog(u: string): string {
  try {
    const url = new URL(u);
    const path = url.pathname
      .split('/')
      .map((s) => (tokenLike(s) ? '(token)' : s))
      .join('/');
    return url.origin + path;
  } catch {
    return '(unparsable URL)';
  }
}

/** Whether printing `u` as is could show a secret (a query string, credentials or a token-like path segment). */
export function urlHasSecrets(u: string): boolean {
  try {
    const url = new URL(u);
    return url.search !== '' || url.username !== '' || url.password !== '' || url.pathname.split('/').some(tokenLike);
  } catch {
    return true;
  }
}
