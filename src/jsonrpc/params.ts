// Positional-parameter checks with Agave's (paritytech jsonrpc / serde) wording. Front thread, per call, cheap.
// Each check comes twice: try* RETURNS the refusal as a Failure (what sendTransaction's hot path calls: a refusal must
// cost no more than an acceptance, issue #18 defect 9), and the plain name throws it as a RelayError (the localnet
// facade and other non-hot handlers, which the dispatcher answers the same way).
import { Errors, Failure, orThrow } from '../errors/registry.js';
import { serdeType } from '../errors/serde-type.js';

const NOT_AN_ARRAY = Object.freeze(new Failure(Errors.INVALID_PARAMS, '`params` should be an array'));

/** `params` must be an array (or absent: treated as []), with a length in [min, max]. */
export function tryParamsArray(params: unknown, min: number, max: number): readonly unknown[] | Failure {
  if (params === undefined || params === null) params = [];
  if (!Array.isArray(params)) return NOT_AN_ARRAY;
  if (params.length < min || params.length > max) {
    const expected =
      min === max ? `Expected ${min} parameter${min === 1 ? '' : 's'}.` : `Expected from ${min} to ${max} parameters.`;
    return new Failure(Errors.INVALID_PARAMS, `Invalid parameters: ${expected}`, `Got: ${params.length}`);
  }
  return params;
}

export function paramsArray(params: unknown, min: number, max: number): readonly unknown[] {
  return orThrow(tryParamsArray(params, min, max));
}

/** A config object parameter: absent/null -> undefined; anything but a plain object -> -32602. */
export function tryConfigObject(value: unknown): Record<string, unknown> | undefined | Failure {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    return new Failure(Errors.INVALID_PARAMS, `Invalid params: invalid type: ${serdeType(value)}, expected struct config`);
  }
  return value as Record<string, unknown>;
}

export function configObject(value: unknown): Record<string, unknown> | undefined {
  return orThrow(tryConfigObject(value));
}

export function tryExpectString(v: unknown, what: string): string | Failure {
  if (typeof v !== 'string') return new Failure(Errors.INVALID_PARAMS, `Invalid params: invalid type: ${serdeType(v)}, expected ${what}`);
  return v;
}

export function expectString(v: unknown, what: string): string {
  return orThrow(tryExpectString(v, what));
}

export function tryOptionalBoolean(v: unknown, field: string): boolean | undefined | Failure {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') return new Failure(Errors.INVALID_PARAMS, `Invalid params: invalid type: ${serdeType(v)}, expected a boolean for \`${field}\``);
  return v;
}

export function optionalBoolean(v: unknown, field: string): boolean | undefined {
  return orThrow(tryOptionalBoolean(v, field));
}

/** Unsigned integer (u64-like) config field; JSON numbers only, as Agave. */
export function tryOptionalUsize(v: unknown, field: string): number | undefined | Failure {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || !Number.isSafeInteger(v)) {
    return new Failure(Errors.INVALID_PARAMS, `Invalid params: invalid type: ${serdeType(v)}, expected usize for \`${field}\``);
  }
  return v;
}

export function optionalUsize(v: unknown, field: string): number | undefined {
  return orThrow(tryOptionalUsize(v, field));
}

export const COMMITMENTS = ['processed', 'confirmed', 'finalized'] as const;
export type Commitment = (typeof COMMITMENTS)[number];

export function tryOptionalCommitment(v: unknown, field: string): Commitment | undefined | Failure {
  if (v === undefined || v === null) return undefined;
  // Never String(v): a client's {"toString": 1} throws and a deeply nested array overflows the stack (#18).
  if (typeof v !== 'string') {
    return new Failure(
      Errors.INVALID_PARAMS,
      `Invalid params: invalid type: ${serdeType(v)}, expected one of \`processed\`, \`confirmed\`, \`finalized\` for \`${field}\``,
    );
  }
  if (!(COMMITMENTS as readonly string[]).includes(v)) {
    return new Failure(
      Errors.INVALID_PARAMS,
      `Invalid params: unknown variant \`${v}\`, expected one of \`processed\`, \`confirmed\`, \`finalized\` for \`${field}\``,
    );
  }
  return v as Commitment;
}

export function optionalCommitment(v: unknown, field: string): Commitment | undefined {
  return orThrow(tryOptionalCommitment(v, field));
}
