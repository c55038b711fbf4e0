// The delivery-accounting log never blocks its thread: its destination is a FIFO nobody reads (the pipe fills after
// 64 KiB, like stdout piped into a stalled log shipper). A flood of 20,000 accounting lines returns at once, the
// lines beyond the bounded buffer are counted as dropped, one summary line says how many, and close() is bounded.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AccountingLog } from '../../../src/egress/consumer/accounting-log.js';
import { createLogger } from '../../../src/log/logger.js';

describe('AccountingLog', () => {
  it('a flood into a sink that never drains: no blocking, drops counted and summarised, bounded close', async () => {
    const fifo = join(mkdtempSync(join(tmpdir(), 'slotrelay-acct-')), 'sink');
    execFileSync('mkfifo', [fifo]);
    // A reader that exists (so the writer can open) but never reads.
    const readFd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const summaries: Record<string, unknown>[] = [];
    const summary = createLogger('warn', 'test');
    summary.warn = ((o: Record<string, unknown>) => void summaries.push(o)) as typeof summary.warn;
    summary.error = (() => undefined) as typeof summary.error; // EPIPE once the test closes the reader
    const acc = new AccountingLog({ level: 'info', bindings: { thread: 'egress', worker: 0 }, summary, dest: fifo, maxBufferBytes: 256 * 1024 });
    await new Promise((r) => setTimeout(r, 50)); // the destination opens the FIFO asynchronously

    const t0 = performance.now();
    for (let i = 0; i < 20_000; i++) {
      acc.log.warn({ traceId: `t${i}`, keyId: 0, outcomes: { rpc: 'failed', static: 'dropped:stale' }, retry: 'none' }, 'egress: transaction not delivered by any route');
    }
    const floodMs = performance.now() - t0;
    expect(floodMs).toBeLessThan(2_000); // ~20k JSON lines serialised; nothing waited for the sink
    expect(acc.linesDropped).toBeGreaterThan(10_000); // 256 KiB buffer + 64 KiB pipe hold ~2,000 lines

    const t1 = performance.now();
    await acc.close();
    expect(performance.now() - t1).toBeLessThan(1_500); // bounded even though the sink never drains
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatchObject({ event: 'accounting_lines_dropped', droppedTotal: acc.linesDropped });

    // What did reach the pipe is whole JSON lines.
    const buf = Buffer.alloc(4096);
    const n = readSync(readFd, buf, 0, buf.length, null);
    expect(n).toBeGreaterThan(0);
    const first = buf.subarray(0, n).toString('utf8').split('\n')[0];
    expect(JSON.parse(first)).toMatchObject({ level: 40, thread: 'egress', worker: 0, traceId: 't0' });
    closeSync(readFd); // the writer blocked in the thread pool gets EPIPE and finishes
  });
});
