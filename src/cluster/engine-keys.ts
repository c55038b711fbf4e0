// Names of everything the relays keep in the engine (cold: computed once per key at start). API keys never reach the
// engine: a key is named by the first 128 bits of its SHA-256, so the engine, its dumps and MONITOR show no secret.
//
//   {ns}:budget:{keyHash}:{submit|simulate|read}   hash {t: tokens, at: engine ms}  shared token bucket (lease script)
//   {ns}:telemetry:{region}                        string (JSON, regionFigures)     one region's figures, PX staleAfterMs
//   {ns}:revoked                                   hash keyHash -> JSON {at}         revoked keys (slotrelay keys revoke)
//   {ns}:revoked:rev                               hash {epoch, rev}                 revision of {ns}:revoked (revocation-script.ts)
//   {ns}:keys                                      hash keyHash -> JSON {v, at, plan} keys and plans (keys add|set|remove)
//   {ns}:keys:rev                                  integer                           bumped by every change of {ns}:keys
//   {ns}:keys:log                                  sorted set keyHash by revision    each key's last change (incremental reads)
//   channel {ns}:keys:changed                      PUBLISH rev / 'revoked'           wakes every relay's key sync at once

export type BudgetClass = 'submit' | 'simulate' | 'read';

export { keyHash } from '../admission/key-hash.js';

export const budgetKey = (ns: string, hash: string, cls: BudgetClass): string => `${ns}:budget:${hash}:${cls}`;
export const telemetryKey = (ns: string, region: string): string => `${ns}:telemetry:${region}`;
export const revokedKey = (ns: string): string => `${ns}:revoked`;
export const revokedRevKey = (ns: string): string => `${ns}:revoked:rev`;
export const keysKey = (ns: string): string => `${ns}:keys`;
export const keysRevKey = (ns: string): string => `${ns}:keys:rev`;
export const keysLogKey = (ns: string): string => `${ns}:keys:log`;
export const keysChannel = (ns: string): string => `${ns}:keys:changed`;

/** What logs and `keys list` show of a key: the first 32 bits of its hash (never the key). */
export const fingerprint = (hash: string): string => hash.slice(0, 8);
