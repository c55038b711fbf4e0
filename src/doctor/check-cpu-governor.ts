// Doctor check `cpu-governor` (cold): every CPU's cpufreq scaling governor is `performance` (what Agave asks of
// validators: ramping the clock up on demand adds latency to every wake-up of the front and worker threads).
// Skipped where there is no cpufreq (most VMs and containers: the hypervisor owns the clock).
import { fail, pass, skip, type Finding } from './finding.js';
import type { HostFiles } from './host-files.js';

const CPU_DIR = 'sys/devices/system/cpu';

export function checkCpuGovernor(host: HostFiles): Finding {
  const id = 'cpu-governor';
  const cpus = host.list(CPU_DIR).filter((n) => /^cpu\d+$/.test(n));
  const governors = new Map<string, string[]>();
  for (const cpu of cpus) {
    const g = host.read(`${CPU_DIR}/${cpu}/cpufreq/scaling_governor`);
    if (g === undefined) continue;
    governors.set(g, [...(governors.get(g) ?? []), cpu]);
  }
  if (governors.size === 0) return skip(id, `no cpufreq under ${host.path(CPU_DIR)} (a VM or container, or no cpufreq driver): the clock is not this host's to set`);
  const data = Object.fromEntries([...governors].map(([g, list]) => [g, list.length]));
  const slow = [...governors].filter(([g]) => g !== 'performance');
  if (slow.length === 0) return pass(id, `all ${governors.get('performance')!.length} CPUs use the performance governor`, { governors: data });
  return fail(
    id,
    `${slow.map(([g, list]) => `${list.length} CPU${list.length > 1 ? 's' : ''} on "${g}"`).join(', ')}: the clock ramps up on demand, adding latency to every wake-up`,
    'as root: cpupower frequency-set -g performance (Debian package linux-cpupower), or echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor; persist it (a systemd unit or the BIOS power profile)',
    { governors: data },
  );
}
