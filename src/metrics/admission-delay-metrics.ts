// Admission by delay on GET /metrics (front thread, cold: per scrape): what the intake refused or shed because a route
// waited longer than its target sojourn (src/admission/intake.ts), and what the ring consumers measure and publish
// (src/shm/sojourn-layout.ts): each route's state and its minimum sojourn over the last interval, per ring.
import { ROUTE_BY_ID, ROUTE_COUNT } from '../shm/layout.js';
import type { SojournBoard } from '../shm/sojourn-layout.js';
import type { TextBuilder } from './prometheus.js';

export interface AdmissionDelaySource {
  readonly delayRefusals: number;
  readonly shedByRoute: Float64Array;
}

export function renderAdmissionDelay(tb: TextBuilder, intake: AdmissionDelaySource, board: SojournBoard, ringLabels: readonly string[]): void {
  tb.declare('slotrelay_admission_delay_refusals_total', 'counter', 'Transactions refused at intake because every route of theirs was over its target sojourn (503 / -32005, data.cause="queue_delay").');
  tb.sample('slotrelay_admission_delay_refusals_total', {}, intake.delayRefusals);
  tb.declare('slotrelay_admission_delay_shed_total', 'counter', 'Transactions accepted without a route that was over its target sojourn (another of their routes was not), by the route left out.');
  for (let r = 0; r < ROUTE_COUNT; r++) tb.sample('slotrelay_admission_delay_shed_total', { route: ROUTE_BY_ID[r] }, intake.shedByRoute[r]);
  tb.declare('slotrelay_admission_route_over_target', 'gauge', 'Whether a ring consumer judges the route over its target sojourn now (1: the intake refuses or sheds it).');
  tb.declare('slotrelay_admission_min_sojourn_seconds', 'gauge', 'A route\'s minimum sojourn (acceptance to the route\'s send answer) over the ring consumer\'s last interval; absent while none was measured.');
  const n = Math.min(board.writers, ringLabels.length);
  for (let w = 0; w < n; w++) {
    const over = board.over(w);
    for (let r = 0; r < ROUTE_COUNT; r++) {
      const us = board.minUs(w, r);
      if (us < 0 && (over & (1 << r)) === 0) continue;
      tb.sample('slotrelay_admission_route_over_target', { ring: ringLabels[w], route: ROUTE_BY_ID[r] }, (over >> r) & 1);
      if (us >= 0) tb.sample('slotrelay_admission_min_sojourn_seconds', { ring: ringLabels[w], route: ROUTE_BY_ID[r] }, us / 1e6);
    }
  }
}
