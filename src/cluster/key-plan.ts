// A key's plan as the cluster engine stores it (cold: the CLI writes it, each relay's key sync reads it). The record is
// the plan of a config key (the keys section of the config, docs/configuration.md "Keys and plans") without the key:
// the engine's field is the key's hash (engine-keys.ts), so neither the engine, its dumps nor `keys list` can show a key.
// The plan is stored with every default filled in, so every relay applies the same plan whatever its version's defaults.
import { z } from 'zod';
import { keySchema } from '../config/schema.js';
import { issueText } from '../config/issue-text.js';
import type { KeyPlan } from '../admission/key-table.js';

export const keyPlanSchema = keySchema.omit({ key: true });

/** {ns}:keys field value: v (record version), at (ms of the last change), plan. */
export interface KeyRecord {
  readonly v: 1;
  readonly at: number;
  readonly plan: KeyPlan;
}

/** Why a plan cannot be used (load.ts refuses the same for a config key), or null. */
export function planProblem(plan: Readonly<KeyPlan>): string | null {
  for (const r of plan.defaultRoutes ?? []) {
    if (!plan.allowedRoutes.includes(r)) return `default route "${r}" is not in allowedRoutes`;
  }
  return null;
}

/** A plan from anything (a record, a --plan object merged with flags): every default filled, checked. */
export function parsePlan(raw: unknown): { plan: KeyPlan } | { error: string } {
  const r = keyPlanSchema.safeParse(raw);
  // issueText: never a value or an unknown field's name from the plan (a pasted key would be one).
  if (!r.success) return { error: r.error.issues.map(issueText).join('; ') };
  const problem = planProblem(r.data);
  return problem === null ? { plan: r.data } : { error: problem };
}

export function encodeRecord(plan: Readonly<KeyPlan>, at: number): string {
  const rec: KeyRecord = { v: 1, at, plan };
  return JSON.stringify(rec);
}

const recordShape = z.object({ v: z.literal(1), at: z.number(), plan: z.unknown() });

/** The record in a {ns}:keys field, or why it cannot be used (a relay then keeps what it had for that key). */
export function decodeRecord(text: string): KeyRecord | { error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { error: 'not JSON' };
  }
  const r = recordShape.safeParse(raw);
  if (!r.success) return { error: 'not a v1 key record' };
  const p = parsePlan(r.data.plan);
  return 'error' in p ? p : { v: 1, at: r.data.at, plan: p.plan };
}
