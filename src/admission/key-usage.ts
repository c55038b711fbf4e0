// Per-key usage on /metrics, by key NAME (never the key): transactions accepted into the rings and requests refused by
// the key's rate limit (front thread). accepted()/rateLimited() are HOT (one typed-array increment indexed by the key's
// numeric id, no label built per call); render() is cold (per scrape) and sums ids by name, so an engine key whose plan
// changed (a new entry, the same name) stays one series. Every key the table knows is rendered, zeros included, so a
// dashboard lists idle keys too.
import type { KeyTable } from './key-table.js';
import type { TextBuilder } from '../metrics/prometheus.js';

/** Initial ids covered; grows by doubling when an engine key gets an id beyond it (cold: once per new key). */
const INITIAL_IDS = 64;

export class KeyUsage {
  private acceptedById = new Float64Array(INITIAL_IDS);
  private limitedById = new Float64Array(INITIAL_IDS);

  constructor(private readonly keys: KeyTable) {}

  /** One transaction of key `id` published into the rings (Intake.publish; bundles go to the bundle service instead). */
  accepted(id: number): void {
    if (id >= this.acceptedById.length) this.grow(id);
    this.acceptedById[id]++;
  }

  /** One request (an HTTP body, batch or not, or a QUIC ingress stream) of key `id` refused as rate_limited. */
  rateLimited(id: number): void {
    if (id >= this.limitedById.length) this.grow(id);
    this.limitedById[id]++;
  }

  private grow(id: number): void {
    let n = this.acceptedById.length;
    while (n <= id) n *= 2;
    const a = new Float64Array(n);
    a.set(this.acceptedById);
    this.acceptedById = a;
    const l = new Float64Array(n);
    l.set(this.limitedById);
    this.limitedById = l;
  }

  render(tb: TextBuilder): void {
    const accepted = new Map<string, number>();
    const limited = new Map<string, number>();
    for (const e of this.keys.entries) {
      const a = e.id < this.acceptedById.length ? this.acceptedById[e.id] : 0;
      const l = e.id < this.limitedById.length ? this.limitedById[e.id] : 0;
      accepted.set(e.name, (accepted.get(e.name) ?? 0) + a);
      limited.set(e.name, (limited.get(e.name) ?? 0) + l);
    }
    tb.declare('slotrelay_key_transactions_accepted_total', 'counter', 'Transactions accepted into the rings, by API key name (HTTP, JSON-RPC and QUIC ingress; not bundles).');
    for (const [name, v] of accepted) tb.sample('slotrelay_key_transactions_accepted_total', { key_name: name }, v);
    tb.declare('slotrelay_key_rate_limited_total', 'counter', 'Requests refused by the key\'s rate limit (rate_limited: HTTP, JSON-RPC, QUIC ingress), by API key name.');
    for (const [name, v] of limited) tb.sample('slotrelay_key_rate_limited_total', { key_name: name }, v);
  }
}
