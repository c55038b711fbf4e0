// A headless Chromium (Debian's, through scripts/ci/ensure-chromium.sh) driven over the DevTools protocol with the
// `ws` package: open a page, evaluate an expression in it, take a screenshot, collect console and CSP reports. For
// tests of live pages (a --screenshot run cannot watch a page update). No playwright/puppeteer dependency.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';

interface CdpMessage {
  readonly id?: number;
  readonly method?: string;
  readonly sessionId?: string;
  readonly params?: Record<string, unknown>;
  readonly result?: Record<string, unknown>;
  readonly error?: { message: string };
}

export interface BrowserPage {
  /** Evaluate `expression` in the page, its JSON-serialisable result returned. */
  evaluate<T>(expression: string): Promise<T>;
  /** A PNG of the viewport. */
  screenshot(): Promise<Buffer>;
  /** Console messages and browser log entries (CSP violations are reported here), as text. */
  readonly logs: string[];
}

export interface Browser {
  open(url: string, width: number, height: number): Promise<BrowserPage>;
  close(): Promise<void>;
}

/** The chromium binary, installed from apt when missing (throws with the script's reason when that is impossible). */
export function chromiumPath(): string {
  return execFileSync('bash', ['scripts/ci/ensure-chromium.sh'], { encoding: 'utf8', timeout: 600_000 }).trim().split('\n').pop()!;
}

export async function launchChromium(binary: string = chromiumPath()): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'cdp-profile-'));
  const child: ChildProcess = spawn(
    binary,
    ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--hide-scrollbars', '--force-color-profile=srgb', '--remote-debugging-port=0', `--user-data-dir=${profile}`, 'about:blank'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const wsUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('chromium printed no DevTools address within 20 s')), 20_000);
    child.once('exit', (code) => reject(new Error(`chromium exited with ${String(code)}`)));
    createInterface({ input: child.stderr! }).on('line', (l) => {
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(l);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  const ws = new WebSocket(wsUrl, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  const listeners = new Map<string, (m: CdpMessage) => void>();
  ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as CdpMessage;
    if (m.id !== undefined) {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) p?.reject(new Error(m.error.message));
      else p?.resolve(m.result ?? {});
    } else if (m.sessionId !== undefined) listeners.get(m.sessionId)?.(m);
  });
  const send = (method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });

  return {
    async open(url, width, height) {
      const { targetId } = (await send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
      const { sessionId } = (await send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
      const logs: string[] = [];
      let loaded: (() => void) | null = null;
      listeners.set(sessionId, (m) => {
        if (m.method === 'Runtime.consoleAPICalled') logs.push(`console: ${JSON.stringify((m.params as { args: unknown[] }).args)}`);
        if (m.method === 'Log.entryAdded') logs.push(`log: ${(m.params as { entry: { text: string } }).entry.text}`);
        if (m.method === 'Page.loadEventFired') loaded?.();
      });
      await send('Page.enable', {}, sessionId);
      await send('Runtime.enable', {}, sessionId);
      await send('Log.enable', {}, sessionId);
      await send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false }, sessionId);
      const load = new Promise<void>((r) => (loaded = r));
      await send('Page.navigate', { url }, sessionId);
      await load;
      return {
        logs,
        async evaluate<T>(expression: string): Promise<T> {
          const r = (await send('Runtime.evaluate', { expression, returnByValue: true }, sessionId)) as { result: { value: T }; exceptionDetails?: { text: string } };
          if (r.exceptionDetails) throw new Error(`page threw: ${r.exceptionDetails.text}`);
          return r.result.value;
        },
        async screenshot() {
          const r = (await send('Page.captureScreenshot', { format: 'png' }, sessionId)) as { data: string };
          return Buffer.from(r.data, 'base64');
        },
      };
    },
    async close() {
      try {
        await send('Browser.close');
      } catch {
        /* already gone */
      }
      ws.close();
      // Its profile is removed once it has exited (it writes there until then).
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(profile, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
