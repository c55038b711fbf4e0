// The slot source on /metrics (front thread, cold: per scrape): which source the telemetry thread stands on, how
// often it switched into each, and how far the Geyser stream is behind. docs/geyser.md. Labels are source names
// only: never the endpoint or its token.
import type { TextBuilder } from '../../metrics/prometheus.js';
import { SLOT_SOURCES, type SlotSourceStatus } from './slot-source.js';

export function renderSlotSource(tb: TextBuilder, s: SlotSourceStatus | null): void {
  if (s === null) return;
  tb.declare('slotrelay_slot_source_active', 'gauge', 'The slot source the telemetry thread leads with (1 for the active one): grpc, pubsub or poll');
  for (const src of SLOT_SOURCES) tb.sample('slotrelay_slot_source_active', { source: src }, s.active === src ? 1 : 0);
  tb.declare('slotrelay_slot_source_switches_total', 'counter', 'Switches of the slot source, by the source switched to');
  for (const src of SLOT_SOURCES) tb.sample('slotrelay_slot_source_switches_total', { to: src }, s.switches[src]);
  if (s.grpc === null) return;
  tb.declare('slotrelay_grpc_stream_up', 'gauge', '1 while the Yellowstone gRPC stream (upstream.grpc) is up');
  tb.sample('slotrelay_grpc_stream_up', {}, s.grpc.state === 'up' ? 1 : 0);
  if (s.grpc.behindSlots !== null) {
    tb.declare('slotrelay_grpc_stream_behind_slots', 'gauge', 'Slots the gRPC stream newest slot is behind the newest any source gave');
    tb.sample('slotrelay_grpc_stream_behind_slots', {}, s.grpc.behindSlots);
  }
}
