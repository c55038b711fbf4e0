// The relay under soak, as users run it: `node dist/src/cli.js start --config FILE` in a child process (driver
// process, cold apart from one pass over each log line). Counts every byte the relay writes (stdout + stderr, the
// localnet child's inherited stderr included), tallies log lines by level and event, follows the embedded localnet's
// pid (`localnet_started` / `localnet_restarted`), and keeps the `relay_stopped` line and the last lines for the report.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface Listener {
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

export interface RelayStopped {
  readonly exitCode?: number;
  readonly drained?: boolean;
  readonly undelivered?: number;
  readonly accepted?: number;
  readonly records?: Readonly<Record<string, number>>;
  readonly outcomes?: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readonly [field: string]: unknown;
}

export interface RelayExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly atMs: number;
}

/** Lines kept for the report when something goes wrong. */
const TAIL_LINES = 80;
/** Event lines kept with their time (a 10-minute soak logs a few hundred besides log_summary). */
const MAX_EVENT_LINES = 2_000;
/** Longest event line kept (as JSON text). */
const EVENT_LINE_CHARS = 400;
/** Distinct error/warn messages counted (beyond: "(other)"). */
const MAX_MESSAGES = 200;
const READY_TIMEOUT_MS = 90_000;
/** What src/log/summarized-log.ts appends to a summary line's message. */
const SUMMARY_SUFFIX = / \(\d+ in the last \d+ s; one example\)$/;

const LEVEL_NAMES: Readonly<Record<number, string>> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/**
 * The relay's environment: PATH, and the allocator and Node settings an experiment may set on the driver
 * (MALLOC_ARENA_MAX, NODE_OPTIONS), passed through so that a soak can compare them; nothing else of the caller's.
 */
function relayEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
  for (const k of ['MALLOC_ARENA_MAX', 'NODE_OPTIONS']) if (process.env[k] !== undefined) env[k] = process.env[k];
  // The relay's per-thread heap figures are then taken after a full collection (src/metrics/thread-memory.ts): live
  // sizes, which is what the soak's heap verdict (thread-heaps.ts) judges.
  env.NODE_OPTIONS = [env.NODE_OPTIONS, '--expose-gc'].filter((x) => x !== undefined && x !== '').join(' ');
  return env;
}

export class RelayChild {
  readonly child: ChildProcess;
  readonly startedAtMs = Date.now();
  /** Bytes on stdout and stderr. */
  bytes = 0;
  lines = 0;
  readonly byLevel = new Map<string, number>();
  readonly byEvent = new Map<string, number>();
  /** warn and above, by message: occurrences (a summary line counts its `count`). */
  readonly warnMessages = new Map<string, number>();
  readonly tail: string[] = [];
  /** Every event line but log_summary (bounded): when the localnet, telemetry, health and routes changed. */
  readonly events: { readonly atMs: number; readonly line: string }[] = [];
  localnetPid: number | null = null;
  /** Every localnet pid the relay reported, in order (first start and each restart). */
  readonly localnetPids: number[] = [];
  listeners: readonly Listener[] = [];
  upstream: string | null = null;
  stopped: RelayStopped | null = null;
  exit: RelayExit | null = null;
  private readonly exited: Promise<RelayExit>;
  private readonly watchers: ((event: string, line: Record<string, unknown>) => void)[] = [];

  constructor(cliPath: string, configFile: string, cwd: string) {
    this.child = spawn(process.execPath, [cliPath, 'start', '--config', configFile], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: relayEnv(),
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal, atMs: Date.now() };
        resolve(this.exit);
      });
    });
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      stream.on('data', (chunk: Buffer) => void (this.bytes += chunk.length));
      createInterface({ input: stream }).on('line', (line) => this.onLine(line));
    }
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Called with every JSON log line that has an `event` field. */
  onEvent(watcher: (event: string, line: Record<string, unknown>) => void): void {
    this.watchers.push(watcher);
  }

  private onLine(line: string): void {
    this.lines++;
    this.tail.push(line.length > 2000 ? line.slice(0, 2000) + '...' : line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
    if (!line.startsWith('{')) return;
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const level = typeof m.level === 'number' ? (LEVEL_NAMES[m.level] ?? String(m.level)) : 'none';
    bump(this.byLevel, level);
    if (typeof m.level === 'number' && m.level >= 40 && typeof m.msg === 'string') {
      // A summary line ("... (N in the last S s; one example)", event log_summary) stands for `count` occurrences.
      const msg = `${level}: ${m.msg.replace(SUMMARY_SUFFIX, '')}`;
      const key = this.warnMessages.has(msg) || this.warnMessages.size < MAX_MESSAGES ? msg : '(other)';
      const n = typeof m.count === 'number' && m.count > 0 ? m.count : 1;
      this.warnMessages.set(key, (this.warnMessages.get(key) ?? 0) + n);
    }
    const event = typeof m.event === 'string' ? m.event : null;
    if (event === null) return;
    bump(this.byEvent, event);
    if (event !== 'log_summary' && this.events.length < MAX_EVENT_LINES) {
      const { time, level: _l, pid: _p, hostname: _h, listeners: _ls, ...rest } = m;
      const text = JSON.stringify({ ...rest, ...(typeof m.pid === 'number' && event.startsWith('localnet') ? { pid: m.pid } : {}) });
      this.events.push({ atMs: typeof time === 'number' ? time : Date.now(), line: text.length > EVENT_LINE_CHARS ? text.slice(0, EVENT_LINE_CHARS) + '...' : text });
    }
    if (event === 'relay_ready' && Array.isArray(m.listeners)) {
      this.listeners = m.listeners as Listener[];
      this.upstream = typeof m.upstream === 'string' ? m.upstream : null;
    } else if ((event === 'localnet_started' || event === 'localnet_restarted') && typeof m.pid === 'number') {
      this.localnetPid = m.pid;
      this.localnetPids.push(m.pid);
    } else if (event === 'localnet_exited') {
      this.localnetPid = null;
    } else if (event === 'relay_stopped') {
      this.stopped = m as RelayStopped;
    }
    for (const w of this.watchers) w(event, m);
  }

  /** Resolves with the listeners once `relay_ready` is printed; rejects if the relay exits or takes too long. */
  async ready(): Promise<readonly Listener[]> {
    const until = Date.now() + READY_TIMEOUT_MS;
    while (this.listeners.length === 0) {
      if (this.exit !== null) throw new Error(`relay exited before ready (${String(this.exit.code ?? this.exit.signal)}):\n${this.tail.join('\n')}`);
      if (Date.now() > until) throw new Error(`relay not ready after ${READY_TIMEOUT_MS} ms:\n${this.tail.join('\n')}`);
      await sleep(50);
    }
    return this.listeners;
  }

  url(name: 'rpc' | 'relay'): string {
    const l = this.listeners.find((x) => x.name === name);
    if (l === undefined) throw new Error(`relay has no ${name} listener`);
    return `http://${l.host}:${l.port}`;
  }

  /** The exit, or null if it did not exit within timeoutMs. */
  async waitExit(timeoutMs: number): Promise<RelayExit | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), timeoutMs);
    });
    const result = await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    // Let the last lines (relay_stopped) be read: the pipes close after the exit event.
    if (result !== null) await sleep(200);
    return result;
  }

  signal(sig: NodeJS.Signals): void {
    if (this.exit === null) this.child.kill(sig);
  }

  /**
   * SIGKILL the relay and the localnet child it may leave behind (a killed relay cannot stop it). The localnet pid is
   * checked against /proc before the signal: only a process running our cli's `localnet` command is killed.
   */
  killAll(): void {
    this.signal('SIGKILL');
    for (const pid of new Set(this.localnetPids)) killLocalnetPid(pid, 'SIGKILL');
  }
}

/** The pid runs `... cli.js localnet ...` (our localnet child), read from /proc; false when it is gone. */
export function isLocalnetProcess(pid: number): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.some((a) => a.endsWith('cli.js')) && argv.includes('localnet');
  } catch {
    return false;
  }
}

/** Signal a localnet child by pid, only if it still is one. True when the signal was sent. */
export function killLocalnetPid(pid: number, sig: NodeJS.Signals): boolean {
  if (!isLocalnetProcess(pid)) return false;
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

function bump(m: Map<string, number>, key: string): void {
  m.set(key, (m.get(key) ?? 0) + 1);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
