// Admission by delay's judge (src/egress/consumer/sojourn-judge.ts) over a real board (src/shm/sojourn-layout.ts), as
// the intake reads it: a route goes over its target only when the minimum sojourn of a whole interval was above it,
// comes back at the first sample at or under it or after an idle interval, and other rows and routes are untouched.
import { afterEach, describe, expect, it } from 'vitest';
import { SojournJudge } from '../../../src/egress/consumer/sojourn-judge.js';
import { ROUTE_IDS } from '../../../src/shm/layout.js';
import { SojournBoard, createSojournBuffer } from '../../../src/shm/sojourn-layout.js';

const DIRECT = 1 << ROUTE_IDS.direct;
const STATIC = 1 << ROUTE_IDS.static;
const targets = { direct: 100, static: 50, rpc: 0, jito: 0 };
let judges: SojournJudge[] = [];

function setUp(busy = false): { board: SojournBoard; judge: SojournJudge; reader: SojournBoard; inFlight: { busy: boolean } } {
  const sab = createSojournBuffer(3);
  const board = new SojournBoard(sab);
  const inFlight = { busy };
  // A long interval: the test calls tick() itself.
  const judge = new SojournJudge(board, 2, targets, 60_000, () => inFlight.busy);
  judges.push(judge);
  return { board, judge, reader: new SojournBoard(sab), inFlight };
}

afterEach(() => {
  for (const j of judges) j.close();
  judges = [];
});

describe('SojournJudge', () => {
  it('marks a route over only when every sojourn of an interval was above its target', () => {
    const { judge, reader } = setUp();
    judge.sample(ROUTE_IDS.direct, 150_000);
    judge.sample(ROUTE_IDS.direct, 99_000); // one under the target: no standing queue
    judge.tick();
    expect(reader.over(2)).toBe(0);
    judge.sample(ROUTE_IDS.direct, 150_000);
    judge.sample(ROUTE_IDS.direct, 120_000);
    expect(reader.over(2)).toBe(0); // judged at the interval's end, not per sample
    judge.tick();
    expect(reader.over(2)).toBe(DIRECT);
    expect(reader.minUs(2, ROUTE_IDS.direct)).toBe(120_000);
    // Only this writer's row, only this route.
    expect(reader.over(0)).toBe(0);
    expect(reader.over(1)).toBe(0);
  });

  it('reopens at the first sample at or under the target, without waiting for the interval', () => {
    const { judge, reader } = setUp();
    judge.sample(ROUTE_IDS.static, 80_000);
    judge.tick();
    expect(reader.over(2)).toBe(STATIC);
    judge.sample(ROUTE_IDS.static, 50_000);
    expect(reader.over(2)).toBe(0);
  });

  it('an interval without samples reopens an idle route and keeps a busy one as it was', () => {
    const { judge, reader, inFlight } = setUp(true);
    judge.sample(ROUTE_IDS.direct, 500_000);
    judge.tick();
    expect(reader.over(2)).toBe(DIRECT);
    judge.tick(); // records in flight, none answered: the queue is still there
    expect(reader.over(2)).toBe(DIRECT);
    expect(reader.minUs(2, ROUTE_IDS.direct)).toBe(-1);
    inFlight.busy = false;
    judge.tick();
    expect(reader.over(2)).toBe(0);
  });

  it('a queue that answers nothing is judged by its head of line: older than the target and carrying the route', () => {
    const sab = createSojournBuffer(1);
    const reader = new SojournBoard(sab);
    const head = { ageUs: 40_000, mask: DIRECT };
    const judge = new SojournJudge(new SojournBoard(sab), 0, targets, 60_000, () => true, { ageUs: () => head.ageUs, routeMask: () => head.mask });
    judges.push(judge);
    judge.tick();
    expect(reader.over(0)).toBe(0); // 40 ms: under direct's 100 ms
    head.ageUs = 400_000;
    judge.tick();
    expect(reader.over(0)).toBe(DIRECT); // not static: the head record does not carry it
    head.ageUs = -1; // drained, nothing waits, nothing in flight would reopen it; here a sample does
    judge.sample(ROUTE_IDS.direct, 1_000);
    expect(reader.over(0)).toBe(0);
  });

  it('never judges a route whose target is 0, and close() clears the row', () => {
    const { judge, reader } = setUp();
    judge.sample(ROUTE_IDS.rpc, 10_000_000);
    judge.sample(ROUTE_IDS.direct, 10_000_000);
    judge.tick();
    expect(reader.over(2)).toBe(DIRECT);
    expect(reader.minUs(2, ROUTE_IDS.rpc)).toBe(-1);
    judge.close();
    expect(reader.over(2)).toBe(0);
  });
  it("below minBacklog records (CoDel's maxpacket) nothing is over, whatever the samples: a slow wait is not a queue", () => {
    const sab = createSojournBuffer(1);
    const reader = new SojournBoard(sab);
    const queue = { depth: 3 };
    const judge = new SojournJudge(new SojournBoard(sab), 0, targets, 60_000, () => true, null, { depth: () => queue.depth, min: 32 });
    judges.push(judge);
    judge.sample(ROUTE_IDS.direct, 400_000); // e.g. every send of the interval waited on a handshake
    judge.tick();
    expect(reader.over(0)).toBe(0);
    queue.depth = 32; // the same waits with a queue behind them: a standing queue
    judge.sample(ROUTE_IDS.direct, 400_000);
    judge.tick();
    expect(reader.over(0)).toBe(DIRECT);
    queue.depth = 5; // drained below the guard: reopened at the next judgement
    judge.sample(ROUTE_IDS.direct, 400_000);
    judge.tick();
    expect(reader.over(0)).toBe(0);
  });
  it('a backlog the interval\'s answers drain within the target is no standing queue (a stall, not a queue)', () => {
    const sab = createSojournBuffer(1);
    const reader = new SojournBoard(sab);
    const queue = { depth: 10 };
    // Interval 5 s, target 100 ms: each answer of the interval drains 0.02 records' worth of the target.
    const judge = new SojournJudge(new SojournBoard(sab), 0, targets, 5_000, () => true, null, { depth: () => queue.depth, min: 4 });
    judges.push(judge);
    for (let i = 0; i < 500; i++) judge.sample(ROUTE_IDS.direct, 300_000); // 500 late answers: 10 drain within 100 ms
    judge.tick();
    expect(reader.over(0)).toBe(0);
    queue.depth = 11; // more than drains within the target at that rate: a standing queue
    for (let i = 0; i < 500; i++) judge.sample(ROUTE_IDS.direct, 300_000);
    judge.tick();
    expect(reader.over(0)).toBe(DIRECT);
  });
});
