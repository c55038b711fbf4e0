// The live fuzzer's reload phase (harness process; cold): the relay's own config file (its keys inline) rewritten with
// a seeded mutation — a YAML special character dropped into a key's line, the text cut short, a character deleted, a
// key moved where a field name or a route goes — then reloaded, by SIGHUP or by `slotrelay reload --config`, in turn.
// Judged by what a person could read afterwards: `slotrelay reload`'s output, /health?detail (answered without a key),
// the status page's /status.json and the relay's log lines since the write must show no 8 consecutive characters of
// any key (issue #47 item 1: a parser's excerpt of a keys file is a key in clear). Every reload must be answered
// (refused, applied or unchanged) within RELOAD_BOUND_MS, and the good file is put back after each.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { newPhase, notePhase, type PhaseSummary } from './phase-summary.js';
import { caseRng, type Rng } from './rng.js';

export const RELOAD_CLASSES = ['expected', 'secretShown', 'notAnswered', 'relayDied'] as const;
/** A reload is a file read and a diff: answered in well under a second; 10 s leaves a loaded box room. */
const RELOAD_BOUND_MS = 10_000;
const RELOAD_BASE = (1 << 30) + (1 << 28);
const SPECIALS = ['{', '}', '[', ']', '"', "'", ':', ': ', '\t', '\n', '- ', '&', '*', '!', '|', '>', '#', '%', '@', '`', ','];

export interface ReloadPhaseOptions {
  readonly seed: number;
  readonly reloads: number;
  readonly examples: number;
  readonly configFile: string;
  readonly pid: number;
  readonly rpcUrl: string;
  readonly adminUrl: string;
  readonly cwd: string;
  readonly secrets: readonly string[];
  /** Starts collecting the relay's output lines; the function returned stops and gives them. */
  readonly captureLines: () => () => string[];
  readonly relayAlive: () => boolean;
}

type Kind = 'special character on a key line' | 'text cut short' | 'character deleted' | 'key as a field name' | 'key as a route' | 'key line indented';

const KINDS: readonly Kind[] = ['special character on a key line', 'text cut short', 'character deleted', 'key as a field name', 'key as a route', 'key line indented'];

/** Every 8-character window of any secret that `text` holds (case-insensitive). */
export function secretWindows(text: string, secrets: readonly string[]): string[] {
  const t = text.toLowerCase();
  const found: string[] = [];
  for (const s of secrets) {
    const k = s.toLowerCase();
    for (let i = 0; i + 8 <= k.length; i++) if (t.includes(k.slice(i, i + 8))) found.push(k.slice(i, i + 8));
  }
  return found;
}

function mutate(rng: Rng, good: string, secrets: readonly string[], kind: Kind): string {
  const key = secrets[rng.int(secrets.length)];
  const at = good.indexOf(key);
  const lineStart = good.lastIndexOf('\n', at) + 1;
  const lineEnd = good.indexOf('\n', at);
  switch (kind) {
    case 'special character on a key line': {
      const pos = lineStart + rng.int(lineEnd - lineStart + 1);
      return good.slice(0, pos) + SPECIALS[rng.int(SPECIALS.length)] + good.slice(pos);
    }
    case 'text cut short':
      // Cut inside or just after a key: the parser's excerpt is then the key's line.
      return good.slice(0, at + rng.int(key.length + 4));
    case 'character deleted': {
      const pos = lineStart + rng.int(lineEnd - lineStart);
      return good.slice(0, pos) + good.slice(pos + 1);
    }
    case 'key as a field name':
      return good.replace(`key: ${key}`, `${key}: x`);
    case 'key as a route':
      return good.replace(`key: ${key}`, `key: ${key}\n    allowedRoutes: [${secrets[rng.int(secrets.length)]}]`);
    case 'key line indented':
      return good.slice(0, lineStart) + ' '.repeat(1 + rng.int(5)) + good.slice(lineStart);
  }
}

async function getText(url: string): Promise<string> {
  try {
    return await (await fetch(url, { signal: AbortSignal.timeout(5_000) })).text();
  } catch (err) {
    return `(${url}: ${(err as Error).message})`;
  }
}

async function reloads(rpcUrl: string): Promise<number> {
  try {
    return ((JSON.parse(await getText(`${rpcUrl}/health?detail`)) as { config?: { reloads?: number } }).config?.reloads ?? -1);
  } catch {
    return -1;
  }
}

function cliReload(cwd: string, configFile: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['dist/src/cli.js', 'reload', '--config', configFile], { cwd, timeout: RELOAD_BOUND_MS }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1, out: `${stdout}\n${stderr}` });
    });
  });
}

/** SIGHUP, then waits for /health?detail's reload count to pass `before`; false when it did not within the bound. */
async function hupReload(o: ReloadPhaseOptions, before: number): Promise<boolean> {
  process.kill(o.pid, 'SIGHUP');
  const deadline = performance.now() + RELOAD_BOUND_MS;
  while (performance.now() < deadline) {
    if ((await reloads(o.rpcUrl)) > before) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

export async function runReloadPhase(o: ReloadPhaseOptions): Promise<PhaseSummary> {
  const p = newPhase('reload', RELOAD_CLASSES, ['expected']);
  const good = readFileSync(o.configFile, 'utf8');
  const started = performance.now();
  let refused = 0;
  for (let i = 0; i < o.reloads && o.relayAlive(); i++) {
    const rng = caseRng(o.seed, RELOAD_BASE + i);
    const kind = KINDS[rng.int(KINDS.length)];
    const viaCli = i % 2 === 0;
    const stopCapture = o.captureLines();
    writeFileSync(o.configFile, mutate(rng, good, o.secrets, kind));
    let cliOut = '';
    let answered: boolean;
    if (viaCli) {
      const r = await cliReload(o.cwd, o.configFile);
      cliOut = r.out;
      answered = r.code !== -1;
      if (r.code !== 0) refused++;
    } else {
      answered = await hupReload(o, await reloads(o.rpcUrl));
    }
    const seen = { cli: cliOut, health: await getText(`${o.rpcUrl}/health?detail`), status: await getText(`${o.adminUrl}/status.json`) };
    const log = stopCapture().join('\n');
    const how = viaCli ? 'reload --config' : 'SIGHUP';
    if (!o.relayAlive()) notePhase(p, 'relayDied', kind, i, `the relay exited after a ${how}`, o.examples);
    else if (!answered) notePhase(p, 'notAnswered', kind, i, `no reload outcome within ${RELOAD_BOUND_MS} ms of a ${how}`, o.examples);
    else {
      const where = Object.entries({ ...seen, log }).filter(([, text]) => secretWindows(text, o.secrets).length > 0).map(([w]) => w);
      // The detail names where and how many windows, never the key: this report is printed and committed.
      if (where.length > 0) notePhase(p, 'secretShown', kind, i, `${how}: a key's characters in ${where.join(', ')}`, o.examples);
      else notePhase(p, 'expected', kind, i, how, o.examples);
    }
    p.run++;
    // The good file back (a mutation that still parses may have been applied); SIGHUP, not another CLI start.
    writeFileSync(o.configFile, good);
    if (o.relayAlive()) await hupReload(o, await reloads(o.rpcUrl));
  }
  p.elapsedMs = Math.round(performance.now() - started);
  p.figures['refused by reload --config'] = refused;
  p.truncated = p.run < o.reloads;
  return p;
}
