// Doctor check `udp-buffers` (cold): the kernel's UDP socket buffer sizes against what Agave asks validators for.
// The relay asks for SO_RCVBUF/SO_SNDBUF of 2-8 MiB (src/quic/socket-buffers.ts), capped by the kernel at the maxima;
// sockets that ask nothing get the defaults. Agave's values cover both (deploy/sysctl/60-slotrelay.conf).
import type { Config } from '../config/schema.js';
import { fail, pass, skip, type Finding } from './finding.js';
import type { HostFiles } from './host-files.js';

/** Agave's recommended net.core.{r,w}mem_{max,default} (docs.anza.xyz, "Setup a Validator", System Tuning): 128 MiB. */
export const AGAVE_UDP_BUFFER_BYTES = 134_217_728;
const KEYS = ['rmem_max', 'rmem_default', 'wmem_max', 'wmem_default'] as const;

/** The relay opens UDP (QUIC) sockets: egress to leaders or static peers, or the QUIC ingress. */
export function usesQuic(config: Readonly<Config>): boolean {
  return config.routes.direct.enabled || config.routes.static.peers.length > 0 || config.relayHost.quicPort !== 0;
}

export function checkUdpBuffers(config: Readonly<Config>, host: HostFiles): Finding {
  const id = 'udp-buffers';
  if (!usesQuic(config)) return skip(id, 'no QUIC socket in this config (routes.direct off, no static peers, relayHost.quicPort 0)');
  const values: Record<string, number> = {};
  for (const k of KEYS) {
    const text = host.read(`proc/sys/net/core/${k}`);
    if (text === undefined || !/^\d+$/.test(text)) return skip(id, `${host.path(`proc/sys/net/core/${k}`)} is not readable here (not Linux, or a restricted container)`);
    values[k] = Number(text);
  }
  const short = KEYS.filter((k) => values[k]! < AGAVE_UDP_BUFFER_BYTES);
  const data = { ...values, wanted: AGAVE_UDP_BUFFER_BYTES };
  if (short.length === 0) return pass(id, `net.core.{r,w}mem_{max,default} are all >= ${AGAVE_UDP_BUFFER_BYTES} (what Agave asks validators for)`, data);
  return fail(
    id,
    `${short.map((k) => `net.core.${k} = ${values[k]}`).join(', ')}: below the ${AGAVE_UDP_BUFFER_BYTES} bytes Agave asks for; QUIC datagrams are dropped at the socket in bursts`,
    `as root: install -m 0644 deploy/sysctl/60-slotrelay.conf /etc/sysctl.d/ && sysctl --system (or: ${short.map((k) => `sysctl -w net.core.${k}=${AGAVE_UDP_BUFFER_BYTES}`).join('; ')})`,
    data,
  );
}
