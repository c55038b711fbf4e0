// The relay config's `localnet:` section <-> LocalnetOptions (cold: once per localnet start). The relay passes the
// section to its localnet child as one flag, `--bench-json <json>` (the section as the config schema parsed it), and
// `slotrelay localnet` turns it back into LocalnetOptions with the same schema, so both ends validate alike.
import { localnetSchema, type LocalnetConfig } from '../config/localnet-schema.js';
import { ConfigError } from '../config/load.js';
import type { LocalnetOptions } from './localnet.js';

const LAMPORTS_PER_SOL = 1_000_000_000;

/** The child's flags for a config's `localnet:` section. */
export function localnetChildArgs(cfg: LocalnetConfig): string[] {
  return ['--bench-json', JSON.stringify(cfg)];
}

/** Parse `--bench-json` (any subset of the `localnet:` section; defaults as in the config). */
export function parseBenchJson(text: string): LocalnetConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ConfigError('--bench-json must be a JSON object (the config file\'s localnet: section)');
  }
  const r = localnetSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new ConfigError(`--bench-json: localnet.${i.path.join('.')}: ${i.message}`);
  }
  return r.data;
}

/** The LocalnetOptions a `localnet:` section stands for. */
export function localnetOptionsFromConfig(cfg: LocalnetConfig): LocalnetOptions {
  return {
    validators: cfg.validators,
    slotMs: cfg.slotMs,
    consensus: cfg.consensus,
    finalityDelayMs: cfg.finalityDelayMs,
    shredToBankMs: cfg.shredToBankMs,
    links: cfg.links,
    kinds: cfg.kinds,
    firedancerIdleTimeoutMs: cfg.firedancerIdleTimeoutMs,
    rpc: { ...cfg.rpc, stake: BigInt(Math.round(cfg.rpc.stakeSol * LAMPORTS_PER_SOL)) },
    qos: cfg.qos,
    blockEngineRateLimitPerSecond: cfg.blockEngine.rateLimitPerSecond,
    arrivalLog: cfg.arrivalLog,
    blockEnginePort: cfg.blockEngine.port,
    grpcPort: cfg.grpcPort,
    blockEngineStake: BigInt(Math.round(cfg.blockEngine.stakeSol * LAMPORTS_PER_SOL)),
    blockCapacity: cfg.blockCapacity,
    competitors: cfg.competitors.map((c) => ({
      name: c.name,
      tps: c.tps,
      stake: BigInt(Math.round(c.stakeSol * LAMPORTS_PER_SOL)),
      validator: c.validator,
      everySlots: c.everySlots,
      hotSlots: c.hotSlots,
      microLamportsPerCu: c.microLamportsPerCu,
      connections: c.connections,
    })),
    stakedPeers: cfg.stakedPeers.map((p) => ({ identity: p.identity, stake: BigInt(Math.round(p.stakeSol * LAMPORTS_PER_SOL)) })),
  };
}
