// The doctor's readers of tool and /proc output (src/doctor/): chronyc tracking's sign and leap status, the
// open-file line of /proc/self/limits (including "unlimited"), and the descriptor budget's arithmetic.
import { describe, expect, it } from 'vitest';
import { parseChronyTracking } from '../../../src/doctor/check-clock.js';
import { fdBudget, parseNofile } from '../../../src/doctor/check-open-files.js';
import { loadConfig } from '../../../src/config/load.js';

describe('doctor parsers', () => {
  it('reads chronyc tracking: slow is negative, leap status verbatim, anything else undefined', () => {
    const text = 'Reference ID    : 00000000 ()\nSystem time     : 0.250000000 seconds slow of NTP time\nLeap status     : Not synchronised\n';
    expect(parseChronyTracking(text)).toEqual({ leap: 'Not synchronised', offsetMs: -250 });
    expect(parseChronyTracking(text.replace('slow', 'fast'))?.offsetMs).toBe(250);
    expect(parseChronyTracking('506 Cannot talk to daemon')).toBeUndefined();
  });

  it('reads the open-file limit, unlimited as Infinity', () => {
    expect(parseNofile('Max open files            1024                 524288               files     ')).toEqual({ soft: 1024, hard: 524288 });
    expect(parseNofile('Max open files            unlimited            unlimited            files')).toEqual({ soft: Infinity, hard: Infinity });
    expect(parseNofile('Max processes 1 1 processes')).toBeUndefined();
  });

  it('sizes descriptors from the config: rpc endpoints x connections x workers count', () => {
    const base = fdBudget(loadConfig({ env: {} }), 10_000);
    expect(base.total).toBe(10_184);
    const more = fdBudget(loadConfig({ env: {}, flags: [{ path: ['routes', 'rpc', 'endpoints'], value: ['http://a.example', 'http://b.example'] }] }), 10_000);
    expect(more.total - base.total).toBe(2 * 16 * 2); // 2 endpoints x 16 connections x 2 workers
  });
});
