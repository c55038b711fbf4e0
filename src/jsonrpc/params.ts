// Positional-parameter checks with Agave's (paritytech jsonrpc / serde) wording. Front thread, per call, cheap.
import { Errors, RelayError } from '../errors/registry.js';

/** `params` must be an array (or absent: treated as []), with a length in [min, max]. */
export function paramsArray(params: unknown, min: number, max: number): readonly unknown[] {
  if (params === undefined || params === null) params = [];
  if (!Array.isArray(params)) {
    throw new RelayError(Errors.INVALID_PARAMS, '`params` should be an array');
  }
  if (params.length < min || params.length > max) {
    const expected =
      min === max ? `Expected ${min} parameter${min === 1 ? '' : 's'}.` : `Expected from ${min} to ${max} parameters.`;
    throw new RelayError(Errors.INVALID_PARAMS, `Invalid parameters: ${expected}`, `Got: ${params.length}`);
  }
  return params;
}

/** A config object parameter: absent/null -> undefined; anything but a plain object -> -32602. */
export function configObject(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new RelayError(Errors.INVALID_PARAMS, `Invalid params: invalid type: ${serdeType(value)}, expected struct config`);
  }
  return value as Record<string, unknown>;
}

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

export function expectString(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new RelayError(Errors.INVALID_PARAMS, `Invalid params: invalid type: ${serdeType(v)}, expected ${what}`);
  return v;
}

export function optionalBoolean(v: unknown, field: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new RelayError(Errors.INVALID_PARAMS, `Invalid params: invalid type: ${serdeType(v)}, expected a boolean for \`${field}\``);
  return v;
}

/** Unsigned integer (u64-like) config field; JSON numbers only, as Agave. */
export function optionalUsize(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || !Number.isSafeInteger(v)) {
    throw new RelayError(Errors.INVALID_PARAMS, `Invalid params: invalid type: ${serdeType(v)}, expected usize for \`${field}\``);
  }
  return v;
}

export const COMMITMENTS = ['processed', 'confirmed', 'finalized'] as const;
export type Commitment = (typeof COMMITMENTS)[number];

export function optionalCommitment(v: unknown, field: string): Commitment | undefined {
  if (v === undefined || v === null) return undefined;
  // Never String(v): a client's {"toString": 1} throws and a deeply nested array overflows the stack (#18).
  if (typeof v !== 'string') {
    throw new RelayError(
      Errors.INVALID_PARAMS,
      `Invalid params: invalid type: ${serdeType(v)}, expected one of \`processed\`, \`confirmed\`, \`finalized\` for \`${field}\``,
    );
  }
  if (!(COMMITMENTS as readonly string[]).includes(v)) {
    throw new RelayError(
      Errors.INVALID_PARAMS,
      `Invalid params: unknown variant \`${v}\`, expected one of \`processed\`, \`confirmed\`, \`finalized\` for \`${field}\``,
    );
  }
  return v as Commitment;
}
