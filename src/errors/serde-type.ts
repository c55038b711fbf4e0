// How an "invalid type" message names a JSON value (any thread, cold: only on a refusal). Lives beside the error
// registry because every layer that words a refusal uses it: the wire decoder, the JSON-RPC params, the config.
/**
 * serde's name for a JSON value's type, used in "invalid type: X, expected Y" messages. It never walks into the
 * value (no String(), no JSON.stringify of objects): client input may be nested thousands deep or carry a
 * `toString` member, and describing it must not throw.
 */
export function serdeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'sequence';
  switch (typeof v) {
    case 'string':
      return `string ${JSON.stringify(v)}`;
    case 'number':
      return Number.isInteger(v) ? `integer \`${v}\`` : `floating point \`${v}\``;
    case 'boolean':
      return `boolean \`${v}\``;
    case 'object':
      return 'map';
    default:
      return typeof v;
  }
}
