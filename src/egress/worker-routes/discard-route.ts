// routes.discard (benchmark only, egress worker): answers every record `dropped:discarded` at once, so
// bench/e2e measures the front thread and the ring hand-off without a network route behind them.
import type { RouteName } from '../../config/schema.js';
import { ROUTE_BY_ID } from '../../shm/layout.js';
import type { EgressOutcome, EgressRoute } from '../contract/route.js';

export class DiscardRoute implements EgressRoute {
  readonly name: RouteName;
  constructor(readonly id: number) {
    this.name = ROUTE_BY_ID[id];
  }
  send(): EgressOutcome {
    return 'dropped:discarded';
  }
  async close(): Promise<void> {}
}
