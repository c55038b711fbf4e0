// Who holds a port (cold: only when a listen failed or a port is found served, at start and in `doctor`). Linux says it
// in /proc: the socket's inode in /proc/net/{tcp,tcp6,udp,udp6}, then the process whose /proc/PID/fd links to
// `socket:[inode]`, as `ss -p` finds it. Only processes this user may read are seen (all of them as root); elsewhere,
// or on another OS, the answer is "not known" and the caller prints the `ss` command instead.
// Names the process by pid and /proc/PID/comm only: a command line may carry a secret (an API key flag).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface PortHolder {
  readonly pid: number;
  /** The executable's short name (/proc/PID/comm, at most 15 characters). */
  readonly command: string;
}

/** /proc/net state of a listening TCP socket (TCP_LISTEN); UDP sockets are matched whatever their state. */
const TCP_LISTEN = '0A';

/** Inodes of the sockets bound to `port` (any address), from the kernel's socket tables; null: no table readable. */
function socketInodes(proto: 'tcp' | 'udp', port: number, proc: string): Set<string> | null {
  const inodes = new Set<string>();
  let read = false;
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of [proto, `${proto}6`]) {
    let text: string;
    try {
      text = readFileSync(`${proc}/net/${table}`, 'utf8');
      read = true;
    } catch {
      continue; // no IPv6, or no /proc
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      if (!f[1]!.endsWith(`:${hexPort}`)) continue;
      if (proto === 'tcp' && f[3] !== TCP_LISTEN) continue;
      if (f[9] !== '0') inodes.add(f[9]!);
    }
  }
  return read ? inodes : null;
}

/**
 * The processes holding `proto` port `port`, as far as this user can see: null when the OS does not say (no /proc);
 * `sockets` is how many sockets the kernel lists on that port (0: nothing on this host holds it).
 */
export function findPortHolders(proto: 'tcp' | 'udp', port: number, proc = '/proc'): { readonly sockets: number; readonly holders: PortHolder[] } | null {
  const inodes = socketInodes(proto, port, proc);
  if (inodes === null) return null;
  if (inodes.size === 0) return { sockets: 0, holders: [] };
  const links = new Set([...inodes].map((i) => `socket:[${i}]`));
  const out: PortHolder[] = [];
  let pids: string[];
  try {
    pids = readdirSync(proc).filter((d) => /^\d+$/.test(d));
  } catch {
    return { sockets: inodes.size, holders: [] };
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`${proc}/${pid}/fd`);
    } catch {
      continue; // another user's process, or gone
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`${proc}/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (!links.has(target)) continue;
      let command = '?';
      try {
        command = readFileSync(`${proc}/${pid}/comm`, 'utf8').trim();
      } catch {
        /* gone meanwhile */
      }
      out.push({ pid: Number(pid), command });
      break;
    }
  }
  return { sockets: inodes.size, holders: out };
}

/** "held by pid 123 (node)"; else what the OS said instead, and how to ask it as root. */
export function describePortHolders(proto: 'tcp' | 'udp', port: number): string {
  const found = findPortHolders(proto, port);
  const ss = `\`ss -${proto === 'tcp' ? 'lt' : 'u'}np 'sport = :${port}'\``;
  if (found === null) return `holder not known (no /proc here): ${ss} names it`;
  if (found.holders.length > 0) return `held by ${found.holders.map((h) => `pid ${h.pid} (${h.command})`).join(', ')}`;
  if (found.sockets === 0) return `no ${proto.toUpperCase()} socket on this host holds port ${port}`;
  return `holder not visible to this user: ${ss} as root names it`;
}
