// `slotrelay localnet` (and the relay's localnet child): parse flags, start the local cluster, print one JSON line
// {"event":"localnet_ready","rpcUrl","wsUrl","blockEngineUrl","grpcUrl" (null without --grpc-port),"consensus","slotMs","shredToBankMs","validators":[{identity,stake,tpuQuic,votePubkey,oneWayDelayMs}],
//  "regions":[{name,rpcUrl,validators:[{identity,tpuQuic,oneWayDelayMs}]}]}
// to stdout when ready, stop cleanly on SIGINT/SIGTERM (cold; runs in its own process).
import { parseArgs } from 'node:util';
import { ConfigError } from '../config/load.js';
import { kindsForFiredancerCount } from './validator-kind.js';
import { localnetOptionsFromConfig, parseBenchJson } from './localnet-args.js';
import { startLocalnet, type LocalnetOptions } from './localnet.js';
import { CONSENSUS_MODES, type ConsensusMode } from './consensus.js';
import type { LocalnetLinkOptions, LocalnetRegionOptions } from './network-options.js';

function int(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new ConfigError(`--${name} must be a non-negative integer`);
  return Number(v);
}

function list(name: string, v: string | undefined): number[] | undefined {
  if (v === undefined) return undefined;
  return v.split(',').map((x) => {
    const n = int(name, x.trim());
    if (n === undefined) throw new ConfigError(`--${name} must be a comma-separated list of integers`);
    return n;
  });
}

function pctList(name: string, v: string | undefined): number[] | undefined {
  if (v === undefined) return undefined;
  return v.split(',').map((x) => {
    const n = Number(x.trim());
    if (x.trim() === '' || !(n >= 0 && n <= 100)) throw new ConfigError(`--${name} must be a comma-separated list of percentages (0..100)`);
    return n;
  });
}

/** `--region fra=5` (5 ms to every validator) or `--region nyc=40,45,80` (per validator), repeatable. */
function regions(v: readonly string[] | undefined): LocalnetRegionOptions[] | undefined {
  if (v === undefined || v.length === 0) return undefined;
  return v.map((text) => {
    const eq = text.indexOf('=');
    const name = eq < 0 ? text : text.slice(0, eq);
    const delays = eq < 0 ? [0] : list('region', text.slice(eq + 1));
    if (delays === undefined || name === '') throw new ConfigError('--region must be NAME=MS or NAME=MS,MS,... (one-way ms per validator)');
    return { name, oneWayDelayMs: delays.length === 1 ? delays[0] : delays };
  });
}

/** Overlay per-validator flag lists on the links (index = validator). */
function withLinkFlags(
  base: readonly LocalnetLinkOptions[] | undefined,
  flags: { loss?: number[]; drop?: number[]; down?: number[] },
): readonly LocalnetLinkOptions[] | undefined {
  if (flags.loss === undefined && flags.drop === undefined && flags.down === undefined) return base;
  const n = Math.max(base?.length ?? 0, flags.loss?.length ?? 0, flags.drop?.length ?? 0, ...(flags.down ?? []).map((i) => i + 1));
  const out: LocalnetLinkOptions[] = [];
  for (let i = 0; i < n; i++) {
    const b = base?.[i] ?? {};
    out.push({
      ...b,
      ...(flags.loss?.[i] !== undefined ? { lossPct: flags.loss[i] } : {}),
      ...(flags.drop?.[i] !== undefined ? { txDropPct: flags.drop[i] } : {}),
      ...(flags.down?.includes(i) === true ? { down: true } : {}),
    });
  }
  return out;
}

export function parseLocalnetArgs(argv: readonly string[]): LocalnetOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      host: { type: 'string' },
      'rpc-port': { type: 'string' },
      // The Jito-compatible block engine (src/localnet/block-engine/): its port and per-IP requests per second.
      'block-engine-port': { type: 'string' },
      'block-engine-rate-limit': { type: 'string' },
      // Yellowstone gRPC (src/localnet/grpc/): off unless given; 0 = ephemeral.
      'grpc-port': { type: 'string' },
      validators: { type: 'string' },
      'slot-ms': { type: 'string' },
      'slots-per-epoch': { type: 'string' },
      seed: { type: 'string' },
      'one-way-delays-ms': { type: 'string' },
      'grace-ms': { type: 'string' },
      'max-transaction-bytes': { type: 'string' },
      'finalized-depth': { type: 'string' },
      // alpenglow (default) | tower, and Alpenglow's certificate delay (docs/localnet.md "Consensus").
      consensus: { type: 'string' },
      'finality-delay-ms': { type: 'string' },
      // The RPC node's ms from a slot's first shred to its bank (docs/localnet.md "When the RPC node learns of a slot").
      'shred-to-bank-ms': { type: 'string' },
      // The network model (docs/localnet.md "Network model"): the relay passes its config's localnet: section here.
      'bench-json': { type: 'string' },
      'loss-pct': { type: 'string' },
      'tx-drop-pct': { type: 'string' },
      down: { type: 'string' },
      'rpc-one-way-delay-ms': { type: 'string' },
      qos: { type: 'boolean' },
      // Leaders of both kinds (docs/localnet.md): the first N validators run Firedancer's TPU, the rest Agave's.
      firedancer: { type: 'string' },
      'firedancer-idle-timeout-ms': { type: 'string' },
      // Regions on this host (docs/localnet.md "Regions on one host"): NAME=MS[,MS...], repeatable.
      region: { type: 'string', multiple: true },
      // Run by the relay: stdin is a pipe from it, and its end (the relay exited, even by SIGKILL) stops the localnet.
      supervised: { type: 'boolean' },
    },
    strict: true,
  });
  const validators = int('validators', values.validators);
  if (validators !== undefined && validators < 1) throw new ConfigError('--validators must be at least 1');
  const slotMs = int('slot-ms', values['slot-ms']);
  if (slotMs !== undefined && slotMs < 1) throw new ConfigError('--slot-ms must be at least 1');
  const slotsPerEpoch = int('slots-per-epoch', values['slots-per-epoch']);
  if (slotsPerEpoch !== undefined && (slotsPerEpoch < 4 || slotsPerEpoch % 4 !== 0)) throw new ConfigError('--slots-per-epoch must be a positive multiple of 4');
  const bench: LocalnetOptions = values['bench-json'] !== undefined ? localnetOptionsFromConfig(parseBenchJson(values['bench-json'])) : {};
  const shredToBankMs = int('shred-to-bank-ms', values['shred-to-bank-ms']);
  const effectiveSlotMs = slotMs ?? bench.slotMs ?? 250;
  if ((shredToBankMs ?? bench.shredToBankMs ?? 0) >= effectiveSlotMs) throw new ConfigError(`--shred-to-bank-ms must be below the slot time (${effectiveSlotMs} ms)`);
  const rpcDelay = int('rpc-one-way-delay-ms', values['rpc-one-way-delay-ms']);
  const consensus = values.consensus;
  if (consensus !== undefined && !(CONSENSUS_MODES as readonly string[]).includes(consensus)) throw new ConfigError(`--consensus must be ${CONSENSUS_MODES.join(' or ')}`);
  const firedancer = int('firedancer', values.firedancer);
  const nValidators = validators ?? bench.validators ?? 4;
  if (firedancer !== undefined && firedancer > nValidators) throw new ConfigError(`--firedancer ${firedancer} is more than the ${nValidators} validators`);
  return {
    ...bench,
    kinds: firedancer !== undefined ? kindsForFiredancerCount(nValidators, firedancer) : bench.kinds,
    firedancerIdleTimeoutMs: int('firedancer-idle-timeout-ms', values['firedancer-idle-timeout-ms']) ?? bench.firedancerIdleTimeoutMs,
    host: values.host,
    rpcPort: int('rpc-port', values['rpc-port']),
    // 0 (the relay's first start of its child: ephemeral) leaves a port the config section names.
    blockEnginePort: int('block-engine-port', values['block-engine-port']) || bench.blockEnginePort,
    blockEngineRateLimitPerSecond: int('block-engine-rate-limit', values['block-engine-rate-limit']) ?? bench.blockEngineRateLimitPerSecond,
    grpcPort: int('grpc-port', values['grpc-port']) ?? bench.grpcPort,
    validators: validators ?? bench.validators,
    slotMs: slotMs ?? bench.slotMs,
    slotsPerEpoch,
    seed: values.seed,
    oneWayDelaysMs: list('one-way-delays-ms', values['one-way-delays-ms']),
    graceMs: int('grace-ms', values['grace-ms']),
    maxTransactionBytes: int('max-transaction-bytes', values['max-transaction-bytes']),
    finalizedDepth: int('finalized-depth', values['finalized-depth']),
    consensus: (consensus as ConsensusMode | undefined) ?? bench.consensus,
    finalityDelayMs: int('finality-delay-ms', values['finality-delay-ms']) ?? bench.finalityDelayMs,
    shredToBankMs: shredToBankMs ?? bench.shredToBankMs,
    links: withLinkFlags(bench.links, {
      loss: pctList('loss-pct', values['loss-pct']),
      drop: pctList('tx-drop-pct', values['tx-drop-pct']),
      down: list('down', values.down),
    }),
    rpc: rpcDelay !== undefined ? { ...bench.rpc, oneWayDelayMs: rpcDelay } : bench.rpc,
    qos: values.qos === true ? { ...bench.qos, enabled: true } : bench.qos,
    regions: regions(values.region),
  };
}

export async function runLocalnetMain(argv: readonly string[]): Promise<void> {
  const opts = parseLocalnetArgs(argv);
  const supervised = argv.includes('--supervised');
  const localnet = await startLocalnet({
    ...opts,
    onInternalError: (err, method) => process.stderr.write(`localnet: internal error in ${method}: ${(err as Error).stack ?? String(err)}\n`),
  });
  process.stdout.write(
    JSON.stringify({ event: 'localnet_ready', rpcUrl: localnet.rpcUrl, wsUrl: localnet.wsUrl, blockEngineUrl: localnet.blockEngineUrl, grpcUrl: localnet.grpcUrl, consensus: localnet.consensus.mode, slotMs: localnet.slotMs, shredToBankMs: localnet.shredToBankMs, validators: localnet.validators, regions: localnet.regions }) + '\n',
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    if (supervised) {
      // No orphans: a relay that dies without stopping us (SIGKILL, a crash) closes this pipe.
      process.stdin.on('end', stop);
      process.stdin.on('error', stop);
      process.stdin.resume();
    }
  });
  await localnet.stop();
  process.stdout.write(JSON.stringify({ event: 'localnet_stopped' }) + '\n');
  // uWS and quiche sockets are closed; exit explicitly in case a native handle lingers.
  process.exit(0);
}
