// The quiche binding used from several threads of one process at once (a relay's egress workers, main thread and
// telemetry probe). With one shared copy of the library this process dies in V8 within seconds (napi-rs's
// process-global reference release; src/quic/quiche.ts); each thread maps its own copy, so every thread must deliver
// and the process must exit 0. Runs the compiled stress script from dist/ as a child process.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const STRESS = fileURLToPath(new URL('../../../dist/scripts/quiche-thread-stress.js', import.meta.url));

interface StressSummary {
  threads: number;
  results: { threadId: number; sent: number; received: number }[];
}

describe('quiche binding from several threads of one process', () => {
  it('four threads send and receive over QUIC at full speed, and the process exits cleanly', async () => {
    const { code, signal, stdout, stderr } = await new Promise<{
      code: number | null;
      signal: NodeJS.Signals | null;
      stdout: string;
      stderr: string;
    }>((resolve) => {
      const child = execFile(process.execPath, [STRESS, '--threads', '3', '--seconds', '3'], { timeout: 60_000 });
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
    expect({ code, signal, stderr: stderr.slice(-2000) }).toEqual({ code: 0, signal: null, stderr: '' });
    const summary = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as StressSummary;
    expect(summary.threads).toBe(4);
    expect(new Set(summary.results.map((r) => r.threadId)).size).toBe(4);
    for (const r of summary.results) {
      expect(r.received).toBeGreaterThan(1_000);
      expect(r.received).toBeLessThanOrEqual(r.sent);
    }
  });
});
