// One schema problem of a config or keys file as one line of text (cold: start, reload, the CLI; main thread).
// zod's own messages can quote what the file holds ("Invalid enum value. Expected 'rpc' | 'direct', received
// '<the value>'"), and a path or an unknown key's name is whatever the file put there: a key pasted one line too far
// left becomes a mapping key. Values are never shown (docs/configuration.md), so a message says which field and what
// is expected, and a name from the file is shown only when it looks like a field name (issue #47 item 1).
import type { z } from 'zod';

/**
 * Whether a name read from the file may be shown: an identifier as config fields are spelled (camelCase, digits,
 * `_`/`-`), and not a run of 8 hexadecimal characters, the shape of a key or token (a UUID's segments, a hex secret).
 */
function showableName(name: string): boolean {
  return /^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(name) && !/[0-9a-f]{8}/i.test(name);
}

function pathText(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(top level)';
  return path.map((p) => (typeof p === 'number' || showableName(p) ? String(p) : '(a name not shown)')).join('.');
}

/** `keys[0].allowedRoutes.1: expected one of rpc, direct, jito, static` — never a value from the file. */
export function issueText(issue: z.ZodIssue): string {
  const at = pathText(issue.path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const shown = issue.keys.filter(showableName).map((k) => `"${k}"`);
      const hidden = issue.keys.length - shown.length;
      const parts = [...shown, ...(hidden > 0 ? [`${hidden} not shown (not shaped like a field name: a value on the wrong line?)`] : [])];
      return `${at}: unknown key${issue.keys.length > 1 ? 's' : ''} ${parts.join(', ')}`;
    }
    case 'invalid_enum_value':
      // The options are the schema's; the value received is the file's.
      return `${at}: expected one of ${issue.options.map(String).join(', ')}`;
    case 'invalid_union_discriminator':
      return `${at}: expected one of ${issue.options.map(String).join(', ')}`;
    default:
      // The remaining zod 3 messages name types, bounds and formats ("Expected string, received number", "Invalid
      // uuid", "Number must be greater than 0"); our own refinements name schema values only.
      return `${at}: ${issue.message}`;
  }
}
