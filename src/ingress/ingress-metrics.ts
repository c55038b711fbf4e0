// Prometheus rendering of the QUIC ingress (front thread, cold: per scrape): the quic-egress thread's counters, read from
// their shared Float64Array (src/shm/ingress-layout.ts), and the front half's refusals and FIN -> ring latency.
import type { TextBuilder } from '../metrics/prometheus.js';
import {
  INGRESS_CONNECTION_OUTCOMES,
  INGRESS_COUNTER,
  INGRESS_STREAM_OUTCOMES,
  attachIngressCounters,
  connectionCounterIndex,
  streamCounterIndex,
} from '../shm/ingress-layout.js';
import type { FrontIngress } from './front-ingress.js';

export class IngressMetrics {
  private readonly k: Float64Array;

  constructor(
    counters: SharedArrayBuffer,
    private readonly front: FrontIngress,
    private readonly depth: () => number,
    private readonly restarts: () => number,
  ) {
    this.k = attachIngressCounters(counters);
  }

  /** Streams admitted and sent in the quic-egress thread (the relay_stopped line's `accepted` counts them). */
  localAdmitted(): number {
    return this.k[INGRESS_COUNTER.localAdmitted];
  }

  /** The quic-egress thread's counter of one stream outcome (tests, benches). */
  streams(outcome: (typeof INGRESS_STREAM_OUTCOMES)[number]): number {
    return this.k[streamCounterIndex(outcome)];
  }

  /** The status page's figures (cold): authenticated connections open now, the quic-egress thread -> front queue, holds now. */
  live(): { readonly connections: number; readonly queueDepth: number; readonly held: number } {
    return { connections: this.k[INGRESS_COUNTER.connectionsActive], queueDepth: this.depth(), held: this.k[INGRESS_COUNTER.connectionsHeld] };
  }

  render(tb: TextBuilder): void {
    const k = this.k;
    tb.declare('slotrelay_quic_ingress_connections_total', 'counter', 'QUIC ingress connections by outcome (accepted, or why refused)');
    for (const o of INGRESS_CONNECTION_OUTCOMES) tb.sample('slotrelay_quic_ingress_connections_total', { outcome: o }, k[connectionCounterIndex(o)]);
    tb.declare('slotrelay_quic_ingress_connections_active', 'gauge', 'QUIC ingress connections open and authenticated');
    tb.sample('slotrelay_quic_ingress_connections_active', {}, k[INGRESS_COUNTER.connectionsActive]);
    tb.declare('slotrelay_quic_ingress_streams_total', 'counter', 'QUIC ingress streams by outcome');
    for (const o of INGRESS_STREAM_OUTCOMES) tb.sample('slotrelay_quic_ingress_streams_total', { outcome: o }, k[streamCounterIndex(o)]);
    tb.declare('slotrelay_quic_ingress_local_admitted_total', 'counter', 'QUIC ingress streams admitted and sent in the quic-egress thread (local admission), also counted accepted');
    tb.sample('slotrelay_quic_ingress_local_admitted_total', {}, k[INGRESS_COUNTER.localAdmitted]);
    tb.declare('slotrelay_quic_ingress_holds_total', 'counter', 'QUIC ingress connections whose stream reads were held because the front queue was full (back-pressure by stream credit)');
    tb.sample('slotrelay_quic_ingress_holds_total', {}, k[INGRESS_COUNTER.holds]);
    tb.declare('slotrelay_quic_ingress_streams_held_total', 'counter', 'QUIC ingress streams that waited unread in a held connection before being read');
    tb.sample('slotrelay_quic_ingress_streams_held_total', {}, k[INGRESS_COUNTER.streamsHeld]);
    tb.declare('slotrelay_quic_ingress_connections_held', 'gauge', 'QUIC ingress connections held now (the front queue is full)');
    tb.sample('slotrelay_quic_ingress_connections_held', {}, k[INGRESS_COUNTER.connectionsHeld]);
    tb.declare('slotrelay_quic_ingress_hold_timeouts_total', 'counter', 'QUIC ingress holds that outlasted holdTimeoutMs (the streams then refused overloaded)');
    tb.sample('slotrelay_quic_ingress_hold_timeouts_total', {}, k[INGRESS_COUNTER.holdTimeouts]);
    tb.declare('slotrelay_quic_ingress_streams_pending', 'gauge', 'QUIC ingress streams handed to the front thread and not answered yet');
    tb.sample('slotrelay_quic_ingress_streams_pending', {}, k[INGRESS_COUNTER.streamsPending]);
    tb.declare('slotrelay_quic_ingress_bytes_total', 'counter', 'QUIC ingress UDP payload bytes');
    tb.sample('slotrelay_quic_ingress_bytes_total', { direction: 'received' }, k[INGRESS_COUNTER.bytesReceived]);
    tb.sample('slotrelay_quic_ingress_bytes_total', { direction: 'sent' }, k[INGRESS_COUNTER.bytesSent]);
    tb.declare('slotrelay_quic_ingress_datagrams_total', 'counter', 'QUIC ingress UDP datagrams');
    tb.sample('slotrelay_quic_ingress_datagrams_total', { direction: 'received' }, k[INGRESS_COUNTER.datagramsReceived]);
    tb.sample('slotrelay_quic_ingress_datagrams_total', { direction: 'sent' }, k[INGRESS_COUNTER.datagramsSent]);
    tb.declare('slotrelay_quic_ingress_queue_depth', 'gauge', 'Messages in the quic-egress thread -> front queue');
    tb.sample('slotrelay_quic_ingress_queue_depth', {}, this.depth());
    tb.declare('slotrelay_quic_thread_restarts_total', 'counter', 'QUIC thread restarts after a crash');
    tb.sample('slotrelay_quic_thread_restarts_total', {}, this.restarts());
    this.front.renderRefusals(tb);
  }
}
