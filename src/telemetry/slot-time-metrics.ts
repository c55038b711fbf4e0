// The cluster's slot duration on /metrics (front thread, cold: per scrape). docs/slot-time.md.
import type { SnapshotReader } from './snapshot.js';
import { slotMsMeasured, slotMsOf } from './slot-ms.js';
import type { TextBuilder } from '../metrics/prometheus.js';

/** Renders the measured slot duration from the leader-slot snapshot (nothing when telemetry is off). */
export function renderSlotTime(tb: TextBuilder, reader: SnapshotReader | null): void {
  if (reader === null) return;
  const view = reader.current();
  tb.declare('slotrelay_cluster_slot_duration_seconds', 'gauge', 'The cluster slot duration the telemetry thread measured (the documented fallback while not measured)');
  tb.sample('slotrelay_cluster_slot_duration_seconds', {}, slotMsOf(view) / 1000);
  tb.declare('slotrelay_cluster_slot_duration_measured', 'gauge', '1 when the slot duration is measured from the cluster, 0 while it is the fallback');
  tb.sample('slotrelay_cluster_slot_duration_measured', {}, slotMsMeasured(view) ? 1 : 0);
}
