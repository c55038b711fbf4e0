// Doctor check `open-files` (cold): the process's open-file limit against what the config needs. Node raises its soft
// RLIMIT_NOFILE to the hard limit at start, so the hard limit is what the relay gets: `ulimit -n` in a shell (the soft
// one, often 1024) understates it. Under systemd the unit's LimitNOFILE= sets both (65536 in
// deploy/systemd/slotrelay.service).
import type { Config } from '../config/schema.js';
import { fail, pass, skip, type Finding } from './finding.js';
import type { HostFiles } from './host-files.js';

/** Concurrent client connections (HTTP keep-alive, PubSub WebSockets) assumed when --clients is not given. */
export const DEFAULT_CLIENT_CONNECTIONS = 10_000;
/** Node itself: stdio, epoll, eventfds, signal pipes, the inspector's, piscina's ports (measured ~40; rounded up). */
const NODE_BASE_FDS = 64;
/** Each thread with its own libuv loop (egress workers, QUIC threads, telemetry): epoll + eventfds + its sockets. */
const PER_THREAD_FDS = 8;
/** Sockets not sized by the config: preflight/read/telemetry fetch pools, PubSub upstream, the cluster engine. */
const OTHER_UPSTREAM_FDS = 64;

export interface FdBudget {
  readonly clients: number;
  readonly upstreamSockets: number;
  readonly threads: number;
  readonly total: number;
}

/** File descriptors the config asks for at most, plus `clients` client connections. */
export function fdBudget(config: Readonly<Config>, clients: number): FdBudget {
  const r = config.routes;
  const workers = config.rings.workers;
  const upstreamSockets =
    r.rpc.endpoints.length * r.rpc.connections * workers +
    (r.jito === undefined ? 0 : r.jito.connections * workers) +
    config.bundles.connections +
    OTHER_UPSTREAM_FDS;
  // egress workers + QUIC threads + telemetry + the main thread; each QUIC thread holds one UDP socket per role.
  const threads = workers + config.rings.quicThreads + 2;
  return { clients, upstreamSockets, threads, total: NODE_BASE_FDS + threads * PER_THREAD_FDS + upstreamSockets + clients };
}

/** "Max open files  <soft>  <hard>  files" from /proc/self/limits; "unlimited" counts as Infinity. */
export function parseNofile(limits: string): { soft: number; hard: number } | undefined {
  const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(limits);
  if (m === null) return undefined;
  const n = (s: string): number => (s === 'unlimited' ? Infinity : Number(s));
  return { soft: n(m[1]!), hard: n(m[2]!) };
}

export function checkOpenFiles(config: Readonly<Config>, host: HostFiles, clients: number): Finding {
  const id = 'open-files';
  const text = host.read('proc/self/limits');
  const limit = text === undefined ? undefined : parseNofile(text);
  if (limit === undefined) return skip(id, `${host.path('proc/self/limits')} is not readable here (not Linux?)`);
  const need = fdBudget(config, clients);
  const data = { soft: limit.soft, hard: limit.hard, needed: need.total, clients, upstreamSockets: need.upstreamSockets, threads: need.threads };
  const how = `${need.total} = ${clients} client connections (--clients) + ${need.upstreamSockets} upstream/route sockets + ${need.threads} threads x ${PER_THREAD_FDS} + ${NODE_BASE_FDS} for Node`;
  if (limit.hard >= need.total) return pass(id, `open-file limit ${limit.hard} (hard; Node raises the soft one to it) >= ${how}`, data);
  return fail(
    id,
    `open-file limit ${limit.hard} (hard; soft ${limit.soft}) < ${how}: connections beyond it fail with EMFILE`,
    'systemd: LimitNOFILE=65536 in the unit (deploy/systemd/slotrelay.service has it); a shell: raise the hard limit in /etc/security/limits.d/ (nofile) or `ulimit -Hn 65536` as root before starting',
    data,
  );
}
