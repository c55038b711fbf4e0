// Runs the embedded localnet as a child process of the relay (cold). The bank executes transactions on the CPU;
// keeping it out of the relay's process keeps it off the front thread. The child prints one JSON line
// {"event":"localnet_ready",...} when it is ready.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Logger } from './log/logger.js';

export interface LocalnetChild {
  readonly rpcUrl: string;
  readonly wsUrl: string;
  readonly validators: readonly { identity: string; tpuQuic: string; stake: number }[];
  stop(): void;
}

const READY_TIMEOUT_MS = 60_000;

export function startLocalnetChild(cliPath: string, log: Logger, extraArgs: readonly string[] = []): Promise<LocalnetChild> {
  const child: ChildProcess = spawn(process.execPath, [cliPath, 'localnet', '--rpc-port', '0', ...extraArgs], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the embedded localnet did not become ready in time'));
    }, READY_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the embedded localnet exited early (code ${String(code)})`));
    });
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      let msg: { event?: string; rpcUrl?: string; wsUrl?: string; validators?: LocalnetChild['validators'] };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        return;
      }
      if (msg.event !== 'localnet_ready' || !msg.rpcUrl) return;
      clearTimeout(timer);
      log.info({ event: 'localnet_started', rpcUrl: msg.rpcUrl, pid: child.pid }, 'embedded localnet ready');
      resolve({
        rpcUrl: msg.rpcUrl,
        wsUrl: msg.wsUrl ?? '',
        validators: msg.validators ?? [],
        stop: () => {
          if (child.exitCode === null) child.kill('SIGTERM');
        },
      });
    });
  });
}
