#!/usr/bin/env node
// Command line (cold): `slotrelay start`, `slotrelay reload` (src/reload/reload-cli.ts), `slotrelay localnet`, `slotrelay doctor` (src/doctor/),
// `slotrelay keys ...` (new here; revoke, restore, revoked
// in src/cluster/keys-cli.ts; add, set, remove, list in src/cluster/keys-plan-cli.ts), and the client library's
// operator commands `send`, `leaders`, `fees` (src/client/cli/, docs/client.md). Flags override the config
// file and environment (docs/configuration.md). Exit codes (README, "Running it under a supervisor"): 0 clean stop with
// every accepted transaction handed to its routes; 1 a stop whose drain timed out (dropped:shutdown), a dependency that
// failed for good, a listener that cannot be opened at start (ListenFailure), or a runtime failure; 2 bad usage/config.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ConfigError, type FlagOverride } from './config/load.js';
import { ListenFailure } from './native/listen-failure.js';
import { NoUwsBuildError } from './native/uws.js';

const USAGE = `usage:
  slotrelay start [--config FILE] [--rpc-host H] [--rpc-port N] [--relay-host H] [--relay-port N]
                  [--upstream URL] [--workers N] [--log-level LEVEL]
  slotrelay reload --config FILE | --pid PID                         (re-read config and keys, no restart: docs/configuration.md "Reload")
  slotrelay localnet [--rpc-port N] [--validators N] [--slot-ms MS] [--grpc-port N]   (the embedded local cluster alone)
  slotrelay bench landing [--sets ...] [--rate 100] [--duration 60]  (landing benchmark: docs/landing.md; --help for flags)
  slotrelay keys new                                                  (print a fresh API key)
  slotrelay keys revoke|restore --config FILE (--name N | --key K)    (for every relay of a cluster: docs/multi-region.md)
  slotrelay keys revoked --config FILE                                (the keys revoked in the cluster, with times)
  slotrelay keys add --config FILE --name N [plan flags] [--key K]    (a key in the cluster engine; prints the new key once)
  slotrelay keys set KEY --config FILE [plan flags]                   (change a plan; KEY: fingerprint, name or the key)
  slotrelay keys remove KEY --config FILE | keys list --config FILE [--json]
    plan flags: [--plan JSON|YAML|@FILE] [--routes rpc,...] [--default-routes R,...|none] [--rate-limit R[/BURST]]
                [--simulate-limit R[/B]] [--read-limit R[/B]] [--bundles true|false] [--preflight simulate|skip|reject]
                [--verify-signatures true|false] [--subscription-limit N]
                (a limit without /BURST gets burst R; the command prints the plan it wrote)
  slotrelay doctor [--config FILE] [--json] [--clients N] [--timeout MS]
                                                                      (check the host and the relay's reach, each finding with
                                                                       its fix; exit 0 ok / 1 a check failed: doctor --help)
  slotrelay example-tx --rpc URL                                      (print a signed base64 transfer for a first request)
  slotrelay example --cluster URL [--relay URL] [--key KEY]           (send one transfer, print where and how it landed)
  slotrelay send [BASE64 | -] [--file PATH] [--routes default|rpc,...] [--max-retries N] [--transport http|quic]
  slotrelay leaders [--start SLOT] [--limit N] [--json]               (next leader slots with route scores)
  slotrelay fees [--addresses A,B,...] [--json]                       (recent priority-fee percentiles)
    send/leaders/fees: [--relay URL] [--rpc URL] [--key KEY (default $SLOTRELAY_KEY)] [--timeout MS]`;

function intFlag(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new ConfigError(`--${name} must be a non-negative integer`);
  return Number(v);
}

async function start(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string' },
      'rpc-host': { type: 'string' },
      'rpc-port': { type: 'string' },
      'relay-host': { type: 'string' },
      'relay-port': { type: 'string' },
      upstream: { type: 'string' },
      workers: { type: 'string' },
      'log-level': { type: 'string' },
    },
    strict: true,
  });
  const flags: FlagOverride[] = [];
  const add = (path: string[], value: unknown): void => {
    if (value !== undefined) flags.push({ path, value });
  };
  add(['rpcHost', 'host'], values['rpc-host']);
  add(['rpcHost', 'port'], intFlag('rpc-port', values['rpc-port']));
  add(['relayHost', 'host'], values['relay-host']);
  add(['relayHost', 'port'], intFlag('relay-port', values['relay-port']));
  add(['upstream', 'rpcUrl'], values.upstream);
  add(['rings', 'workers'], intFlag('workers', values.workers));
  add(['log', 'level'], values['log-level']);
  const { runRelay } = await import('./main.js');
  await runRelay({ configFile: values.config, flags, env: process.env });
}

async function main(): Promise<void> {
  const [cmd, ...rest] = process.argv.slice(2);
  try {
    switch (cmd) {
      case 'start':
        await start(rest);
        return;
      case 'localnet': {
        const { runLocalnetMain } = await import('./localnet/run-localnet.js');
        await runLocalnetMain(rest);
        return;
      }
      case 'doctor': {
        const { runDoctor } = await import('./doctor/run-doctor.js');
        process.exitCode = await runDoctor(rest, process.env);
        return;
      }
      case 'example-tx': {
        const { values } = parseArgs({ args: rest, options: { rpc: { type: 'string' } }, strict: true });
        if (!values.rpc) throw new ConfigError('example-tx needs --rpc URL (the localnet or a devnet RPC)');
        const { buildExampleTransaction } = await import('./client/example-transaction.js');
        process.stdout.write((await buildExampleTransaction(values.rpc)) + '\n');
        return;
      }
      case 'example': {
        const { runExample } = await import('./client/cli/example.js');
        process.exitCode = await runExample(rest, process.env);
        return;
      }
      case 'send': {
        const { runSend } = await import('./client/cli/send.js');
        process.exitCode = await runSend(rest, process.env);
        return;
      }
      case 'leaders': {
        const { runLeaders } = await import('./client/cli/leaders.js');
        process.exitCode = await runLeaders(rest, process.env);
        return;
      }
      case 'fees': {
        const { runFees } = await import('./client/cli/fees.js');
        process.exitCode = await runFees(rest, process.env);
        return;
      }
      case 'bench': {
        if (rest[0] !== 'landing') break;
        const { runLandingBench } = await import('./landing-bench/main.js');
        if (rest.includes('--help')) {
          const { USAGE: LANDING_USAGE } = await import('./landing-bench/options.js');
          process.stdout.write(LANDING_USAGE + '\n');
          return;
        }
        process.exitCode = await runLandingBench(rest.slice(1), process.env);
        return;
      }
      case 'reload': {
        const { runReload } = await import('./reload/reload-cli.js');
        process.exitCode = await runReload(rest);
        return;
      }
      case 'keys':
        if (rest[0] === 'new') {
          process.stdout.write(randomUUID() + '\n');
          return;
        }
        if (rest[0] === 'revoke' || rest[0] === 'restore' || rest[0] === 'revoked') {
          const { runKeysCluster } = await import('./cluster/keys-cli.js');
          process.exitCode = await runKeysCluster(rest, process.env);
          return;
        }
        if (rest[0] === 'add' || rest[0] === 'set' || rest[0] === 'remove' || rest[0] === 'list') {
          const { runKeysPlan } = await import('./cluster/keys-plan-cli.js');
          process.exitCode = await runKeysPlan(rest, process.env);
          return;
        }
        break;
      case '--help':
      case '-h':
      case 'help':
        process.stdout.write(USAGE + '\n');
        return;
    }
    process.stderr.write(USAGE + '\n');
    process.exitCode = 2;
  } catch (err) {
    if (err instanceof ListenFailure) {
      // A listener that cannot be opened: the port, what for, the holder where the OS says, the fix; no stack to read.
      process.stderr.write(`slotrelay: ${err.message}\n`);
      process.exitCode = 1;
    } else if (err instanceof NoUwsBuildError) {
      process.stderr.write(`slotrelay: ${err.message}\n`); // the host cannot run the HTTP front: no stack to read
      process.exitCode = 1;
    } else if (err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`slotrelay: ${(err as Error).message}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`slotrelay: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = 1;
    }
    // A start that failed must end the process: threads, timers or sockets it opened would keep a relay that serves
    // nothing alive, and a supervisor would see it running (README, "Running it under a supervisor").
    if (cmd === 'start') process.exit();
  }
}

void main();
