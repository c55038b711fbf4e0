// `slotrelay localnet` (and the relay's localnet child): parse flags, start the local cluster, print one JSON line
// {"event":"localnet_ready","rpcUrl","wsUrl","validators":[{identity,stake,tpuQuic,votePubkey,oneWayDelayMs}]}
// to stdout when ready, stop cleanly on SIGINT/SIGTERM (cold; runs in its own process).
import { parseArgs } from 'node:util';
import { ConfigError } from '../config/load.js';
import { startLocalnet, type LocalnetOptions } from './localnet.js';

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

export function parseLocalnetArgs(argv: readonly string[]): LocalnetOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      host: { type: 'string' },
      'rpc-port': { type: 'string' },
      validators: { type: 'string' },
      'slot-ms': { type: 'string' },
      'slots-per-epoch': { type: 'string' },
      seed: { type: 'string' },
      'one-way-delays-ms': { type: 'string' },
      'grace-ms': { type: 'string' },
      'max-transaction-bytes': { type: 'string' },
      'finalized-depth': { type: 'string' },
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
  return {
    host: values.host,
    rpcPort: int('rpc-port', values['rpc-port']),
    validators,
    slotMs,
    slotsPerEpoch,
    seed: values.seed,
    oneWayDelaysMs: list('one-way-delays-ms', values['one-way-delays-ms']),
    graceMs: int('grace-ms', values['grace-ms']),
    maxTransactionBytes: int('max-transaction-bytes', values['max-transaction-bytes']),
    finalizedDepth: int('finalized-depth', values['finalized-depth']),
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
    JSON.stringify({ event: 'localnet_ready', rpcUrl: localnet.rpcUrl, wsUrl: localnet.wsUrl, validators: localnet.validators }) + '\n',
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
