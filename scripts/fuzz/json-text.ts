// JSON text for fuzz bodies (harness process; generation, hot). Bodies are built as JS values and serialized here,
// with `Raw` for what JSON.stringify cannot write (1e400, -0, huge integer literals, 25,000-deep arrays), and the
// odd values every typed field is tried with: each comes with what it parses to, so the oracle knows what the relay
// sees.
import fc from 'fast-check';
import type { Rng } from './rng.js';

/** JSON text emitted as-is. `value` is what JSON.parse makes of it. */
export class Raw {
  constructor(
    readonly text: string,
    readonly value: unknown,
  ) {}
}

export function raw(text: string): Raw {
  return new Raw(text, JSON.parse(text));
}

export function toJsonText(v: unknown): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return '[' + v.map(toJsonText).join(',') + ']';
  if (v !== null && typeof v === 'object') {
    return '{' + Object.entries(v as Record<string, unknown>).map(([k, x]) => JSON.stringify(k) + ':' + toJsonText(x)).join(',') + '}';
  }
  const s = JSON.stringify(v);
  return s === undefined ? 'null' : s;
}

/** An object's members in a shuffled order (member order must not matter). */
export function shuffled(rng: Rng, members: Record<string, unknown>): Record<string, unknown> {
  const entries = Object.entries(members);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [entries[i], entries[j]] = [entries[j], entries[i]];
  }
  return Object.fromEntries(entries);
}

/** The `value` of a Raw too deep to parse here: an array. */
export const NESTED: unique symbol = Symbol('nested arrays');

/** `depth` nested arrays, as text (the body limit allows ~25,000). */
export function nestedArrays(depth: number, inner = ''): Raw {
  return new Raw('['.repeat(depth) + inner + ']'.repeat(depth), NESTED);
}

export type JsonType = 'number' | 'string' | 'boolean' | 'object' | 'array' | 'null';

export function jsonTypeOf(v: unknown): JsonType {
  const x = v instanceof Raw ? v.value : v;
  if (x === NESTED) return 'array';
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'array';
  return typeof x as JsonType;
}

const UNICODE = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 });
const ANY_JSON = fc.jsonValue({ maxDepth: 3 });

/** Odd values of every JSON type. Strings and numbers that a field might accept are the caller's to filter. */
export function oddValue(rng: Rng): unknown {
  switch (rng.int(14)) {
    case 0:
      return rng.pick([0, 1, -1, 1.5, -7.25, 1e308, 2 ** 53, 2 ** 53 - 1, 5e-324]);
    case 1:
      return raw(rng.pick(['1e400', '-1e400', '-0', '12345678901234567890', '1E+2', '0.0000001', '-0.0']));
    case 2:
      return rng.pick(['', '0', 'true', 'null', 'base64', 'processed', ' ', '\u0000', '\ud800', 'é', '𝔘𝔫𝔦']);
    case 3:
      return rng.sample(UNICODE);
    case 4:
      return 'x'.repeat(rng.range(100, 3000));
    case 5:
      return rng.chance(0.5);
    case 6:
      return { toString: 1 };
    case 7:
      return rng.pick<unknown>([{}, { valueOf: 1, toString: 'x' }, raw('{"__proto__":{"polluted":true}}'), { length: 1, 0: 'rpc' }]);
    case 8:
      return rng.pick<unknown>([[], [1], ['rpc'], [null], [[]]]);
    case 9:
      return nestedArrays(rng.weighted<number>([[6, rng.range(2, 64)], [3, rng.range(1000, 5000)], [1, rng.range(10_000, 25_000)]]));
    case 10:
      return new Raw('{"toString":{"toString":1},"valueOf":[]}', { toString: { toString: 1 }, valueOf: [] });
    case 11:
      return rng.sample(ANY_JSON);
    case 12:
      return null;
    default:
      return rng.pick([-1, -1e9, 3.14, 1e-7, Number.MAX_SAFE_INTEGER + 2]);
  }
}

/** An odd value whose JSON type is not `avoid` and that is not null (null means "absent" for optional fields). */
export function wrongTyped(rng: Rng, avoid: JsonType): unknown {
  for (let i = 0; i < 64; i++) {
    const v = oddValue(rng);
    const t = jsonTypeOf(v);
    if (t !== avoid && t !== 'null') return v;
  }
  return { toString: 1 };
}
