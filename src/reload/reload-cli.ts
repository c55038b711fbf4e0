// `slotrelay reload --config FILE | --pid PID` (cold, a one-shot command on the relay's host). Finds the relay by the
// pid file it wrote next to its config (FILE.pid: ./reload-files.ts) or takes the pid given, sends it SIGHUP and, with
// --config, waits for the relay's outcome (FILE.reload.json) and prints it. Exit codes: 0 applied or unchanged,
// 1 refused (the running configuration stays; the reason is printed), no relay, or no answer in time; 2 bad usage.
// With --pid alone it only signals (systemd: ExecReload=slotrelay reload --pid $MAINPID) and exits 0 once sent.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { ConfigError } from '../config/load.js';
import { outcomeFileOf, pidFileOf, readOutcome, readPid } from './reload-files.js';

/** How long the command waits for the relay's answer: a reload reads two files and compares two configs. */
const ANSWER_TIMEOUT_MS = 10_000;
const POLL_MS = 50;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM'; // exists, not ours to signal: kill() below says so
  }
}

export async function runReload(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { config: { type: 'string' }, pid: { type: 'string' } }, strict: true });
  if ((values.config === undefined) === (values.pid === undefined)) throw new ConfigError('reload needs exactly one of --config FILE (the relay\'s config: its pid file is FILE.pid) or --pid PID');
  let pid: number;
  let outcomeFile: string | null = null;
  if (values.pid !== undefined) {
    if (!/^[1-9]\d*$/.test(values.pid)) throw new ConfigError('--pid must be a process id');
    pid = Number(values.pid);
  } else {
    const config = resolve(values.config as string);
    const found = readPid(pidFileOf(config));
    if (found === null) {
      process.stderr.write(`slotrelay: no relay started with ${config} (no readable ${pidFileOf(config)}: it is written once the relay is ready)\n`);
      return 1;
    }
    pid = found;
    outcomeFile = outcomeFileOf(config);
  }
  if (!alive(pid)) {
    process.stderr.write(`slotrelay: no process ${pid}${outcomeFile === null ? '' : ' (a stale pid file: the relay did not stop cleanly)'}\n`);
    return 1;
  }
  const before = outcomeFile === null ? 0 : (readOutcome(outcomeFile)?.seq ?? 0);
  try {
    process.kill(pid, 'SIGHUP');
  } catch (err) {
    process.stderr.write(`slotrelay: cannot signal process ${pid}: ${(err as Error).message}\n`);
    return 1;
  }
  if (outcomeFile === null) {
    process.stdout.write(`SIGHUP sent to ${pid}: its log and /health?detail (config) say how the reload went\n`);
    return 0;
  }
  const deadline = Date.now() + ANSWER_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const o = readOutcome(outcomeFile);
    if (o !== null && o.seq > before) {
      if (o.outcome === 'refused') {
        process.stderr.write(`slotrelay: reload refused: ${o.error}\n`);
        return 1;
      }
      const k = o.keys;
      const keys = k === null ? '' : ` (keys: ${k.added.length} added, ${k.changed.length} changed, ${k.removed.length} removed)`;
      process.stdout.write(o.outcome === 'unchanged' ? 'reloaded: nothing changed\n' : `reloaded: ${o.changed.join(', ')}${keys}\n`);
      return 0;
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  process.stderr.write(`slotrelay: process ${pid} did not report a reload within ${ANSWER_TIMEOUT_MS} ms (is it a slotrelay started with this config?)\n`);
  return 1;
}
