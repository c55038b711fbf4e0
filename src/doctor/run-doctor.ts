// `slotrelay doctor [--config FILE] [--json] [--clients N] [--timeout MS]` (cold, CLI only; docs/doctor.md): checks
// the host and the relay's reach with the config `start` would use, prints each finding with its fix, and returns the
// exit code: 0 nothing failed (warnings and skips allowed), 1 a check failed, 2 bad usage or config (cli.ts).
// The host checks are synchronous file reads; the network checks run at once, each bounded by --timeout (and the
// freshness waits: 2 s for a slot to move, 3 s for a WebSocket notification), so a run takes a few seconds.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LOCAL_DIR } from '../config/bootstrap-local.js';
import { ConfigError, loadConfig } from '../config/load.js';
import { checkClock } from './check-clock.js';
import { checkConsensus } from './check-consensus.js';
import { checkCpuGovernor } from './check-cpu-governor.js';
import { checkIdentityStake } from './check-identity.js';
import { checkLeaderSchedule } from './check-leader-schedule.js';
import { checkOpenFiles, DEFAULT_CLIENT_CONNECTIONS } from './check-open-files.js';
import { checkPorts } from './check-ports.js';
import { checkUdpBuffers } from './check-udp-buffers.js';
import { checkUpstreamRpc, type DateSample } from './check-upstream-rpc.js';
import { checkUpstreamWs } from './check-upstream-ws.js';
import { checkUpstreamGrpc } from './check-upstream-grpc.js';
import { checkUws } from './check-uws.js';
import { skip, type Finding } from './finding.js';
import { HostFiles } from './host-files.js';
import { makeReport, renderText, type DoctorReport } from './report.js';
import { upstreamUrls } from './upstream-urls.js';

/** Per upstream call; the relay's own default (upstream.requestTimeoutMs) is 5 s, too long to wait on a dead host. */
const DEFAULT_TIMEOUT_MS = 3_000;

export const DOCTOR_USAGE = `usage: slotrelay doctor [--config FILE] [--json] [--clients N] [--timeout MS]
  Checks this host and the relay's reach with the config \`start\` would use (the same --config; without it
  local/config.yaml when present, else the defaults) and prints each finding with its fix (docs/doctor.md):
    udp-buffers     net.core.{r,w}mem_{max,default} vs the 134217728 bytes Agave asks validators for
    open-files      the open-file limit vs what the config needs (--clients N concurrent clients, default ${DEFAULT_CLIENT_CONNECTIONS})
    clock-sync      chronyc tracking, else timedatectl, else the upstream's Date header (to 1 s)
    cpu-governor    cpufreq scaling_governor of every CPU is "performance" (skipped without cpufreq: VMs)
    upstream-rpc    getHealth ok and the processed slot advancing, per upstream JSON-RPC URL
    upstream-ws     a slotSubscribe notification within 3 s, per upstream PubSub URL
    upstream-grpc   upstream.grpc's Subscribe delivers slot updates within 3 s, and how far behind the RPC's slot
    leader-schedule leaders known telemetry.horizonSlots ahead; with routes.direct, their TPU QUIC addresses
    identity-stake  identity.keypairPath's activated stake (getVoteAccounts): unstaked = a warning
    ports           every configured listener's port can be bound now (run it with the relay stopped)
    uws-build       the uWebSockets.js build \`start\` will load, or why none does
  Statuses: pass, warn, fail, skip (does not apply here, with the reason). Exit 0: nothing failed; 1: a check failed;
  2: bad usage or config. --json prints {"config","ok","counts","findings":[{check,status,detail,fix?,data?}]}.
  --timeout MS bounds each upstream call (default ${DEFAULT_TIMEOUT_MS}).`;

function positiveInt(name: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new ConfigError(`--${name} must be a positive integer`);
  return Number(v);
}

export async function doctorReport(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<{ report: DoctorReport; json: boolean }> {
  const { values } = parseArgs({
    args: [...argv],
    options: { config: { type: 'string' }, json: { type: 'boolean' }, clients: { type: 'string' }, timeout: { type: 'string' } },
    strict: true,
  });
  const clients = positiveInt('clients', values.clients, DEFAULT_CLIENT_CONNECTIONS);
  const timeoutMs = positiveInt('timeout', values.timeout, DEFAULT_TIMEOUT_MS);
  // The file `start` would read, without creating local/config.yaml as `start` does on a first run.
  const local = resolve(process.cwd(), LOCAL_DIR, 'config.yaml');
  const file = values.config ?? (existsSync(local) ? local : undefined);
  const config = loadConfig({ file, env });
  const host = HostFiles.fromEnv(env);
  const urls = upstreamUrls(config);

  // The network checks start together; the host checks are file reads done meanwhile.
  const rpcRuns = urls.rpc.map((u) => checkUpstreamRpc(u.url, u.usedFor, timeoutMs));
  const wsRuns = urls.ws.map((u) => checkUpstreamWs(u.url, u.usedFor, timeoutMs));
  const grpc = checkUpstreamGrpc(config.upstream.grpc, urls.cluster, timeoutMs);
  const schedule = checkLeaderSchedule(config, urls.cluster, timeoutMs);
  const consensus = checkConsensus(urls.cluster, timeoutMs);
  const identity = checkIdentityStake(config, urls.cluster, timeoutMs);
  const ports = checkPorts(config);
  const udp = checkUdpBuffers(config, host);
  const files = checkOpenFiles(config, host, clients);
  const governor = checkCpuGovernor(host);
  const uws = checkUws(config.http);
  const rpc = await Promise.all(rpcRuns);
  const dateSample: DateSample | undefined = rpc.find((r) => r.dateSample !== undefined)?.dateSample;
  const clock = await checkClock(env, dateSample);
  const noRpc: Finding[] = urls.rpc.length === 0 ? [skip('upstream-rpc', 'no upstream.rpcUrl: `start` runs the embedded localnet (a test bench: docs/localnet.md)')] : [];
  const noWs: Finding[] =
    urls.ws.length === 0 ? [skip('upstream-ws', urls.rpc.length === 0 ? 'no upstream: nothing to subscribe to' : 'no upstream WebSocket in use (telemetry off and the PubSub relay off)')] : [];
  const findings: Finding[] = [
    udp,
    files,
    clock,
    governor,
    ...noRpc,
    ...rpc.map((r) => r.finding),
    ...noWs,
    ...(await Promise.all(wsRuns)),
    await grpc,
    await schedule,
    await consensus,
    await identity,
    await ports,
    uws,
  ];
  return { report: makeReport(file === undefined ? null : resolve(file), findings), json: values.json === true };
}

/** The CLI entry: prints the report, returns the exit code. */
export async function runDoctor(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(DOCTOR_USAGE + '\n');
    return 0;
  }
  const { report, json } = await doctorReport(argv, env);
  process.stdout.write(json ? JSON.stringify(report, null, 2) + '\n' : renderText(report));
  return report.ok ? 0 : 1;
}
