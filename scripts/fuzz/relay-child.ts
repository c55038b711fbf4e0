// Starts the real relay (`node dist/src/cli.js start --config <file>`) as a child process for the fuzzer (harness
// process; cold). Its config is written to a temp dir, it binds 127.0.0.1 on ephemeral ports, and its stdout/stderr
// are watched line by line: the relay_ready line gives the ports, and every line that is a pino record at level
// >= 50 (error, fatal) or carries a stack trace is kept as a server log error. stop() always ends the child
// (SIGTERM, then SIGKILL), and a process exit handler kills it if the harness dies first.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { stringify } from 'yaml';

export interface LogError {
  readonly stream: 'stdout' | 'stderr';
  readonly line: string;
  /** requestId / traceId of the record when it has one (the fuzzer sends one per case). */
  readonly requestId: string | null;
}

export interface RelayChild {
  readonly rpcUrl: string;
  readonly relayUrl: string;
  /** The QUIC ingress's UDP port (relayHost.quicPort -1 in the config), null when it is off. */
  readonly quicPort: number | null;
  /** The status page's origin (the admin listener). */
  readonly adminUrl: string;
  /** The config file the relay was started with (the reload phase rewrites it). */
  readonly configFile: string;
  /** Starts keeping every output line; the function returned stops and gives them (the reload phase's secrets scan). */
  captureLines(): () => string[];
  readonly pid: number;
  readonly logErrors: readonly LogError[];
  /** The last lines of output (for a crash report). */
  tail(): string[];
  /** null while running; the exit code or signal once it exited. */
  exited(): string | null;
  /** End the relay (SIGTERM, then SIGKILL after graceMs). Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

const STACK_LINE = /^\s+at .+(:\d+:\d+\)?|\(native\)|<anonymous>\)?)$/;
const EMBEDDED_STACK = /\\n\s+at [^"]*:\d+:\d+/;
const TAIL_LINES = 200;

function classify(line: string): { error: boolean; requestId: string | null } {
  if (line.startsWith('{')) {
    try {
      const rec = JSON.parse(line) as { level?: unknown; requestId?: unknown; traceId?: unknown };
      const requestId = typeof rec.requestId === 'string' ? rec.requestId : typeof rec.traceId === 'string' ? rec.traceId : null;
      const level = typeof rec.level === 'number' ? rec.level : 0;
      return { error: level >= 50 || EMBEDDED_STACK.test(line), requestId };
    } catch {
      /* not a record: fall through */
    }
  }
  return { error: STACK_LINE.test(line) || /^(Uncaught |\w*Error: |node:internal)/.test(line), requestId: null };
}

/** Start the relay with `config` (merged over loopback listeners). Rejects if it is not ready within timeoutMs. */
export async function startRelayChild(config: Record<string, unknown>, cwd: string, timeoutMs = 30_000): Promise<RelayChild> {
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-fuzz-'));
  const file = join(dir, 'config.yaml');
  // relayHost is merged (the caller may add quicPort / quic); the QUIC ingress is off unless asked (port 4433 is not ours).
  const relayHost = { host: '127.0.0.1', port: 0, quicPort: 0, ...((config.relayHost as Record<string, unknown> | undefined) ?? {}) };
  writeFileSync(file, stringify({ rpcHost: { host: '127.0.0.1', port: 0 }, admin: { port: 0 }, ...config, relayHost }));
  const child: ChildProcess = spawn(process.execPath, ['dist/src/cli.js', 'start', '--config', file], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '' },
  });
  const killOnExit = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const tail: string[] = [];
  const logErrors: LogError[] = [];
  let captured: string[] | null = null;
  let exitedAs: string | null = null;
  const exitPromise = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitedAs = String(code ?? signal);
      process.removeListener('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
      resolve();
    }),
  );
  let onReady: ((l: { name: string; host: string; port: number }[]) => void) | null = null;
  const watch = (stream: 'stdout' | 'stderr', input: NodeJS.ReadableStream): void => {
    createInterface({ input }).on('line', (line) => {
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
      captured?.push(line);
      const c = classify(line);
      if (c.error) {
        // A stack trace's lines after the first add nothing countable: one entry per block.
        const prev = logErrors[logErrors.length - 1];
        if (STACK_LINE.test(line) && prev !== undefined && prev.stream === stream && tail[tail.length - 2] === prev.line) {
          (prev as { line: string }).line = line;
        } else {
          logErrors.push({ stream, line, requestId: c.requestId });
        }
      }
      if (onReady !== null && stream === 'stdout' && line.includes('"relay_ready"')) {
        try {
          const m = JSON.parse(line) as { listeners?: { name: string; host: string; port: number }[] };
          if (m.listeners) onReady(m.listeners);
        } catch {
          /* not the ready line */
        }
      }
    });
  };
  watch('stdout', child.stdout!);
  watch('stderr', child.stderr!);

  const stop = async (graceMs = 5_000): Promise<void> => {
    if (exitedAs !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exitPromise;
    clearTimeout(timer);
  };

  let listeners: { name: string; host: string; port: number }[];
  try {
    listeners = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`relay not ready within ${timeoutMs} ms:\n${tail.join('\n')}`)), timeoutMs);
      onReady = (l) => {
        clearTimeout(timer);
        resolve(l);
      };
      void exitPromise.then(() => {
        clearTimeout(timer);
        reject(new Error(`relay exited with ${String(exitedAs)} before it was ready:\n${tail.join('\n')}`));
      });
    });
  } catch (err) {
    await stop(1_000);
    throw err;
  }
  onReady = null;
  const url = (name: string): string => {
    const l = listeners.find((x) => x.name === name);
    if (l === undefined) throw new Error(`relay has no ${name} listener`);
    return `http://${l.host}:${l.port}`;
  };
  return {
    rpcUrl: url('rpc'),
    relayUrl: url('relay'),
    quicPort: listeners.find((x) => x.name === 'quic')?.port ?? null,
    adminUrl: url('admin'),
    configFile: file,
    captureLines: () => {
      const lines: string[] = [];
      captured = lines;
      return () => {
        if (captured === lines) captured = null;
        return lines;
      };
    },
    pid: child.pid ?? -1,
    logErrors,
    tail: () => tail.slice(),
    exited: () => exitedAs,
    stop,
  };
}
