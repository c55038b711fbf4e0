// Which TPU a localnet validator runs (localnet process; read once at start, cold): Agave's (the QoS models of
// tpu-qos.ts / tpu-qos-flow-control.ts) or Firedancer's (tpu-firedancer.ts), and what each publishes about itself
// in getClusterNodes (`version`, `tpu`; both kinds report the same `featureSet`, as Firedancer reports the Agave
// feature set it implements), which is how the relay tells them apart (docs/localnet.md
// "Leaders of both kinds").
import { LOCALNET_SOLANA_CORE_VERSION } from './facade/context.js';

export const VALIDATOR_KINDS = ['agave', 'firedancer'] as const;
export type ValidatorKind = (typeof VALIDATOR_KINDS)[number];

/**
 * What a Firedancer node reports as its version: 0.x (mainnet late 2026: "0.708.20306"). Agave nodes report 2.x-4.x
 * (the localnet's Agave nodes: LOCALNET_SOLANA_CORE_VERSION).
 */
export const FIREDANCER_VERSION = '0.708.20306';

export function versionOfKind(kind: ValidatorKind): string {
  return kind === 'firedancer' ? FIREDANCER_VERSION : LOCALNET_SOLANA_CORE_VERSION;
}

/** `--firedancer N`: the first N validators (the largest stakes) are Firedancer, the rest Agave. */
export function kindsForFiredancerCount(validators: number, firedancer: number): ValidatorKind[] {
  return Array.from({ length: validators }, (_, i) => (i < firedancer ? 'firedancer' : 'agave'));
}
