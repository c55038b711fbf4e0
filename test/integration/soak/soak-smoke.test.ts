// The soak script (scripts/soak, `make soak`) for a short run: 60 s at 200 tx/s with one of each fault (the localnet
// child SIGKILLed, the jito stand-in and the static QUIC peer killed and restarted on their ports) against the real
// relay. Checks the books: per route accepted = sent + failed + dropped:* with 0 unaccounted, the relay's accepted
// total equals the client's, no crash, no answer outside the expected ones (routes_unavailable during a fault is
// expected). And the memory the way a short run can judge it: every thread's live heap (taken after a full collection,
// the relay running with --expose-gc) must not keep growing (scripts/soak/thread-heaps.ts); RSS, still on its way to
// its high-water mark after a minute, is judged by the 10-minute run only (scripts/soak/rss.ts).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureDistFresh, repoRoot } from '../../unit/telemetry/dist-fresh.js';

const SECONDS = 60;
const RATE = 200;

/** dist/scripts/soak is built from scripts/soak, which dist-fresh does not watch. */
function ensureSoakBuilt(): void {
  const src = join(repoRoot, 'scripts/soak');
  const stale = readdirSync(src)
    .filter((f) => f.endsWith('.ts'))
    .some((f) => {
      const js = join(repoRoot, 'dist/scripts/soak', f.replace(/\.ts$/, '.js'));
      return !existsSync(js) || statSync(js).mtimeMs < statSync(join(src, f)).mtimeMs;
    });
  if (stale) {
    try {
      execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: repoRoot, stdio: 'pipe' });
    } catch {
      /* type errors elsewhere still emit */
    }
  }
}

interface SoakJson {
  readonly accounting: { readonly rows: readonly { route: string; accepted: number; outcomesSum: number; unaccounted: number }[] };
  readonly faults: { readonly executed: readonly { kind: string; error?: string }[] };
  readonly verdict: {
    readonly unaccountedZero: boolean;
    readonly totalsAgree: boolean;
    readonly relayCrashed: boolean;
    readonly unexpectedAnswers: number;
    readonly rssFlat: boolean | null;
    readonly heapFlat: boolean;
    readonly failures: readonly string[];
  };
  readonly rss: { readonly heapVerdict: { readonly judged: readonly string[]; readonly growing: readonly unknown[] } };
  readonly client: { readonly accepted: number; readonly transportErrors: Readonly<Record<string, number>> };
  readonly relay: { readonly accepted: number | null };
}

describe('soak (short run)', () => {
  it(`${SECONDS} s with one of each fault: 0 unaccounted per route, no crash`, async () => {
    ensureDistFresh();
    ensureSoakBuilt();
    const dir = mkdtempSync(join(tmpdir(), 'slotrelay-soak-test-'));
    const out = join(dir, 'soak.json');
    try {
      const child = spawn(process.execPath, ['dist/scripts/soak/main.js', '--seconds', String(SECONDS), '--rate', String(RATE), '--out', out], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (c: Buffer) => void (text += c.toString('utf8')));
      child.stderr.on('data', (c: Buffer) => void (text += c.toString('utf8')));
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => child.kill('SIGTERM'), 160_000);
        child.once('exit', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      expect(existsSync(out), `no result (exit ${String(code)}):\n${text}`).toBe(true);
      const r = JSON.parse(readFileSync(out, 'utf8')) as SoakJson;
      expect(r.faults.executed.map((f) => f.kind), text).toEqual(['kill_localnet', 'jito_outage', 'static_outage']);
      expect(r.faults.executed.filter((f) => f.error !== undefined), text).toEqual([]);
      expect(r.verdict.relayCrashed, text).toBe(false);
      expect(r.verdict.unexpectedAnswers, text).toBe(0);
      expect(r.client.accepted, text).toBeGreaterThan(0);
      for (const row of r.accounting.rows) {
        expect(row.accepted, `${row.route}\n${text}`).toBeGreaterThan(0);
        expect(row.unaccounted, `${row.route}\n${text}`).toBe(0);
      }
      expect(r.relay.accepted, text).toBe(r.client.accepted);
      // Every thread kind of this relay was judged (their figures reached /metrics), none kept growing; RSS not judged.
      expect([...r.rss.heapVerdict.judged].sort(), text).toEqual(expect.arrayContaining(['egress', 'front', 'quic-egress', 'telemetry']));
      expect(r.rss.heapVerdict.growing, text).toEqual([]);
      expect(r.verdict.rssFlat, text).toBeNull();
      expect(r.verdict.failures, text).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
