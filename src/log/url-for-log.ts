// A URL as it may appear in logs and printed lines (cold): origin + path only. Providers put API keys in the query
// string (`?api-key=`) or the userinfo, and those must never be logged.
export function urlForLog(u: string): string {
  try {
    const url = new URL(u);
    return url.origin + url.pathname;
  } catch {
    return '(unparsable URL)';
  }
}

/** Whether printing `u` as is could show a secret (a query string or credentials). */
export function urlHasSecrets(u: string): boolean {
  try {
    const url = new URL(u);
    return url.search !== '' || url.username !== '' || url.password !== '';
  } catch {
    return true;
  }
}
