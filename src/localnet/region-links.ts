// Regions on one host (localnet process, main thread; cold set-up, per datagram in the forwarders): each configured
// region sees every validator through a UDP delay forwarder of its own (udp-delay-forwarder.ts), so relays of
// several regions following one localnet measure different pings to the same leaders, as relays in Frankfurt,
// Amsterdam and New York would. A region's view of the cluster is the facade at /regions/{name}: the same node,
// except that getClusterNodes answers that region's forwarder addresses as the validators' tpuQuic
// (docs/localnet.md, "Regions on one host"). A region's delays add to the validators' own links[i].
import { UdpDelayForwarder } from './udp-delay-forwarder.js';
import type { LocalnetRegionOptions } from './network-options.js';

export interface LocalnetRegion {
  readonly name: string;
  /** The region's JSON-RPC URL: the facade's /regions/{name}. */
  readonly rpcUrl: string;
  /** Per validator (index = validator): the address this region reaches its TPU at, and the current delay. */
  readonly validators: readonly { readonly identity: string; readonly tpuQuic: string; readonly oneWayDelayMs: number }[];
}

/** Per-validator delays of a region: one number for all, or one per validator (missing entries: 0). */
export function regionDelaysMs(o: Pick<LocalnetRegionOptions, 'oneWayDelayMs'>, validators: number): number[] {
  const d = o.oneWayDelayMs ?? 0;
  return Array.from({ length: validators }, (_, i) => Math.max(0, typeof d === 'number' ? d : (d[i] ?? 0)));
}

export const REGION_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

export class RegionLinks {
  private readonly forwarders: UdpDelayForwarder[] = [];
  /** Validator tpuQuic -> this region's address for it. */
  readonly tpuQuicOf = new Map<string, string>();

  private constructor(readonly name: string) {}

  static async start(o: LocalnetRegionOptions, host: string, validators: readonly { identity: string; tpuQuic: string }[]): Promise<RegionLinks> {
    if (!REGION_NAME.test(o.name)) throw new Error(`localnet region name "${o.name}": lower-case letters, digits, - and _ (at most 32)`);
    const r = new RegionLinks(o.name);
    const delays = regionDelaysMs(o, validators.length);
    try {
      for (const [i, v] of validators.entries()) {
        const at = v.tpuQuic.lastIndexOf(':');
        const f = new UdpDelayForwarder(host, v.tpuQuic.slice(0, at), Number(v.tpuQuic.slice(at + 1)), delays[i]);
        r.forwarders.push(f);
        r.tpuQuicOf.set(v.tpuQuic, await f.listen());
      }
    } catch (err) {
      r.stop();
      throw err;
    }
    return r;
  }

  /** Change the region's delays while it runs (tests: a path that gets faster or slower). */
  setOneWayDelayMs(d: number | readonly number[]): void {
    const delays = regionDelaysMs({ oneWayDelayMs: d }, this.forwarders.length);
    this.forwarders.forEach((f, i) => (f.oneWayDelayMs = delays[i]));
  }

  get delaysMs(): number[] {
    return this.forwarders.map((f) => f.oneWayDelayMs);
  }

  stop(): void {
    for (const f of this.forwarders) f.close();
  }
}
