// SummarizedLog: a failure repeated per transaction writes its first occurrence at once, then one summary line per
// key per interval with the count and one example, and a last one at close(); `count` sums to the occurrences.
import { pino, type Logger } from 'pino';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LOG_SUMMARY_INTERVAL_MS, SummarizedLog } from '../../../src/log/summarized-log.js';

function capturingLog(level = 'info'): { log: Logger; lines: Record<string, any>[] } {
  const lines: Record<string, any>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l !== '') lines.push(JSON.parse(l));
      cb();
    },
  });
  return { log: pino({ level }, stream), lines };
}

const sum = (lines: Record<string, any>[]): number => lines.reduce((n, l) => n + (l.count as number), 0);

describe('SummarizedLog', () => {
  it('10,000 occurrences of one key over 35 s: first line, one summary per 10 s, the rest at close; counts add up', () => {
    const { log, lines } = capturingLog();
    let now = 1_000_000;
    const s = new SummarizedLog(log, { now: () => now });
    expect(LOG_SUMMARY_INTERVAL_MS).toBe(10_000);
    for (let i = 0; i < 10_000; i++) {
      now += 3.5; // 35 s in all
      s.note('warn', 'rpc http_error', { traceId: `t${i}`, route: 'rpc', reason: 'http_error' }, 'rpc route: endpoint did not accept the transaction');
      if (i % 100 === 0) s.check(); // the timer's job, driven by the test's clock
    }
    expect(lines.length).toBeLessThanOrEqual(4);
    s.close();
    expect(lines[0]).toMatchObject({ level: 40, traceId: 't0', count: 1, msg: 'rpc route: endpoint did not accept the transaction' });
    expect(lines[0].event).toBeUndefined();
    const summaries = lines.slice(1);
    expect(summaries.length).toBe(4); // 10 s, 20 s, 30 s, close
    for (const l of summaries) {
      expect(l).toMatchObject({ event: 'log_summary', route: 'rpc', reason: 'http_error' });
      expect(l.msg).toMatch(/^rpc route: endpoint did not accept the transaction \(\d+ in the last \d+ s; one example\)$/);
      expect(l.traceId).toMatch(/^t\d+$/);
    }
    expect(sum(lines)).toBe(10_000);
    s.note('warn', 'rpc http_error', { traceId: 'late' }, 'x'); // after close: counted by metrics only
    expect(lines).toHaveLength(5);
  });

  it('keys are separate; a key idle for an interval is forgotten and logged at once again', () => {
    const { log, lines } = capturingLog();
    let now = 0;
    const s = new SummarizedLog(log, { now: () => now });
    s.note('warn', 'a', { k: 'a' }, 'A');
    s.note('warn', 'b', { k: 'b' }, 'B');
    s.note('warn', 'a', { k: 'a2' }, 'A');
    expect(lines.map((l) => l.k)).toEqual(['a', 'b']);
    now = 10_000;
    s.check(); // a: summary of 1; b: idle, forgotten
    expect(lines[2]).toMatchObject({ k: 'a2', count: 1, event: 'log_summary' });
    now = 20_000;
    s.check(); // a: idle, forgotten
    s.note('warn', 'a', { k: 'a3' }, 'A');
    s.note('warn', 'b', { k: 'b2' }, 'B');
    expect(lines.slice(3).map((l) => [l.k, l.count, l.event])).toEqual([
      ['a3', 1, undefined],
      ['b2', 1, undefined],
    ]);
    s.close();
  });

  it('a disabled level writes and keeps nothing; keys beyond the bound share one overflow key', () => {
    const { log, lines } = capturingLog('warn');
    const s = new SummarizedLog(log, { now: () => 0 });
    for (let i = 0; i < 100; i++) s.note('info', `k${i}`, { i }, 'info line');
    expect(lines).toEqual([]);
    for (let i = 0; i < 1_000; i++) s.note('warn', `k${i}`, { i }, 'warn line');
    s.close();
    expect(lines.length).toBeLessThanOrEqual(258); // 256 keys + the overflow key's first line + its summary
    expect(sum(lines)).toBe(1_000);
  });
});
