// Runs and supervises the embedded localnet as a child process of the relay (cold, main thread). The bank executes
// transactions on the CPU; keeping it out of the relay's process keeps it off the front thread. The child prints one
// JSON line {"event":"localnet_ready",...} when it is ready.
//
// Supervision (docs/localnet.md): an exit the relay did not ask for is logged (error level, with code and signal)
// and the child is restarted on the same RPC port, so the relay's upstream URL stays valid, after a back-off of
// 0.5 s doubling to 8 s. More than RESTART_LIMIT exits within RESTART_WINDOW_MS means the localnet cannot run here:
// the supervisor gives up and calls `onGiveUp`, and the relay stops with exit code 1. While the child is down the
// relay's health reports the upstream unreachable and intake refuses what no route can deliver.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { LocalnetState } from './health/health-monitor.js';
import type { Logger } from './log/logger.js';

export interface LocalnetValidatorInfo {
  readonly identity: string;
  readonly tpuQuic: string;
  readonly stake: number;
}

export type { LocalnetState };

export interface LocalnetChild {
  readonly rpcUrl: string;
  readonly wsUrl: string;
  /** The localnet's Jito-compatible block engine (bundles; the same port across restarts). */
  readonly blockEngineUrl: string;
  /** Its Yellowstone gRPC endpoint (localnet.grpcPort; the same port across restarts), null when off. */
  readonly grpcUrl: string | null;
  /** Validators of the first start (a restarted localnet has new TPU ports; telemetry follows them). */
  readonly validators: readonly LocalnetValidatorInfo[];
  state(): LocalnetState;
  /** Unplanned exits so far. */
  restarts(): number;
  /** The running child's pid (null while restarting or stopped). */
  pid(): number | null;
  stop(): void;
  /** Stop, and resolve once the child has exited (SIGKILL after timeoutMs): a relay that failed to start leaves none behind. */
  stopAndWait(timeoutMs: number): Promise<void>;
}

export interface SuperviseOptions {
  readonly extraArgs?: readonly string[];
  /** Called once when the supervisor stops restarting (too many exits in the window). */
  readonly onGiveUp?: (reason: string) => void;
  /** Restart back-off, first and largest delay (tests shorten it). */
  readonly backoffMs?: { readonly first: number; readonly max: number };
}

const READY_TIMEOUT_MS = 60_000;
/** Exits tolerated within RESTART_WINDOW_MS before giving up: a crash loop is reported, not hidden. */
export const RESTART_LIMIT = 5;
export const RESTART_WINDOW_MS = 60_000;
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 8_000;

interface Ready {
  readonly child: ChildProcess;
  readonly rpcUrl: string;
  readonly wsUrl: string;
  readonly blockEngineUrl: string;
  readonly grpcUrl: string | null;
  readonly validators: readonly LocalnetValidatorInfo[];
}

function spawnLocalnet(cliPath: string, rpcPort: number, blockEnginePort: number, extraArgs: readonly string[]): Promise<Ready> {
  // stdin is a pipe the child watches (--supervised): when this process dies, even by SIGKILL, the child exits too.
  const child: ChildProcess = spawn(process.execPath, [cliPath, 'localnet', '--supervised', '--rpc-port', String(rpcPort), '--block-engine-port', String(blockEnginePort), ...extraArgs], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the embedded localnet did not become ready in time'));
    }, READY_TIMEOUT_MS);
    const early = (code: number | null, signal: NodeJS.Signals | null): void => {
      clearTimeout(timer);
      reject(new Error(`the embedded localnet exited early (code ${String(code)}, signal ${String(signal)})`));
    };
    child.once('exit', early);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      let msg: { event?: string; rpcUrl?: string; wsUrl?: string; blockEngineUrl?: string; grpcUrl?: string | null; validators?: LocalnetValidatorInfo[] };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        return;
      }
      if (msg.event !== 'localnet_ready' || !msg.rpcUrl) return;
      clearTimeout(timer);
      child.off('exit', early);
      resolve({ child, rpcUrl: msg.rpcUrl, wsUrl: msg.wsUrl ?? '', blockEngineUrl: msg.blockEngineUrl ?? '', grpcUrl: msg.grpcUrl ?? null, validators: msg.validators ?? [] });
    });
  });
}

function portOf(rpcUrl: string): number {
  return Number(new URL(rpcUrl).port);
}

/** Start the localnet child (ephemeral RPC port) and supervise it. Rejects if the first start fails. */
export async function startLocalnetChild(cliPath: string, log: Logger, opts: SuperviseOptions = {}): Promise<LocalnetChild> {
  const extraArgs = opts.extraArgs ?? [];
  const backoff = opts.backoffMs ?? { first: BACKOFF_FIRST_MS, max: BACKOFF_MAX_MS };
  const first = await spawnLocalnet(cliPath, 0, 0, extraArgs);
  const port = portOf(first.rpcUrl);
  const blockEnginePort = first.blockEngineUrl === '' ? 0 : portOf(first.blockEngineUrl);
  // A restarted child keeps the first one's gRPC port too (the flag wins over the config section's grpcPort).
  const restartArgs = first.grpcUrl === null ? extraArgs : [...extraArgs, '--grpc-port', String(portOf(first.grpcUrl))];
  log.info({ event: 'localnet_started', rpcUrl: first.rpcUrl, blockEngineUrl: first.blockEngineUrl, grpcUrl: first.grpcUrl, pid: first.child.pid }, 'embedded localnet ready');

  let current: ChildProcess | null = first.child;
  let state: LocalnetState = 'running';
  let restarts = 0;
  const exitTimes: number[] = [];
  let timer: NodeJS.Timeout | null = null;

  const giveUp = (reason: string): void => {
    state = 'failed';
    log.error({ event: 'localnet_gave_up', restarts, reason }, 'embedded localnet keeps exiting: giving up (the relay stops)');
    opts.onGiveUp?.(reason);
  };

  const restart = (attempt: number): void => {
    timer = null;
    if (state !== 'restarting') return;
    spawnLocalnet(cliPath, port, blockEnginePort, restartArgs).then(
      (ready) => {
        if (state !== 'restarting') {
          ready.child.kill('SIGTERM'); // stopped while it was starting
          return;
        }
        current = ready.child;
        state = 'running';
        watch(ready.child);
        log.warn({ event: 'localnet_restarted', pid: ready.child.pid, rpcUrl: ready.rpcUrl, restarts }, 'embedded localnet restarted');
      },
      (err: unknown) => {
        if (state !== 'restarting') return;
        exitTimes.push(Date.now());
        log.error({ event: 'localnet_restart_failed', attempt, err: (err as Error).message }, 'embedded localnet failed to restart');
        schedule(attempt + 1);
      },
    );
  };

  const schedule = (attempt: number): void => {
    const now = Date.now();
    while (exitTimes.length > 0 && now - exitTimes[0] > RESTART_WINDOW_MS) exitTimes.shift();
    if (exitTimes.length > RESTART_LIMIT) return giveUp(`${exitTimes.length} exits within ${RESTART_WINDOW_MS / 1000} s`);
    const delay = Math.min(backoff.max, backoff.first * 2 ** attempt);
    timer = setTimeout(() => restart(attempt), delay);
    timer.unref();
  };

  const watch = (child: ChildProcess): void => {
    child.once('exit', (code, signal) => {
      if (current !== child) return;
      current = null;
      if (state === 'stopped') return;
      restarts++;
      exitTimes.push(Date.now());
      state = 'restarting';
      log.error(
        { event: 'localnet_exited', pid: child.pid, code, signal, restarts },
        'embedded localnet exited unexpectedly: restarting it on the same port',
      );
      schedule(0);
    });
  };
  watch(first.child);

  const stop = (): void => {
    state = 'stopped';
    if (timer !== null) clearTimeout(timer);
    if (current !== null && current.exitCode === null) current.kill('SIGTERM');
  };

  return {
    rpcUrl: first.rpcUrl,
    blockEngineUrl: first.blockEngineUrl,
    grpcUrl: first.grpcUrl,
    wsUrl: first.wsUrl,
    validators: first.validators,
    state: () => state,
    restarts: () => restarts,
    pid: () => current?.pid ?? null,
    stop,
    stopAndWait: async (timeoutMs) => {
      const child = current;
      stop();
      if (child === null || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      let waited: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (waited = setTimeout(resolve, timeoutMs)));
      await Promise.race([exited, late]);
      clearTimeout(waited);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
