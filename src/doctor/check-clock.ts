// Doctor check `clock-sync` (cold): is this host's clock synchronised? Node cannot call adjtimex(2) and /proc does
// not show the kernel's NTP state, so the check asks, in order:
//   1. `chronyc -n tracking` (chrony, what we recommend: docs/deployment.md): Leap status and the offset from NTP time;
//   2. `timedatectl show -p NTPSynchronized` (systemd-timesyncd or any daemon that sets the kernel's sync flag);
//   3. neither answers (a container, no systemd as PID 1): the upstream's HTTP Date header against the local clock,
//      good to about a second only, and said so.
// With none of the three it is skipped. Receipts' times, slot-time estimates and blockhash expiry all read this clock.
import { execFile } from 'node:child_process';
import { fail, pass, skip, type Finding } from './finding.js';
import type { DateSample } from './check-upstream-rpc.js';

/** A quarter of a 400 ms slot: beyond it slot timing read from this clock is visibly off. */
export const MAX_OFFSET_MS = 100;
/** The Date header has 1 s resolution: a clock further than this from the upstream's is wrong, whatever the rounding. */
export const MAX_DATE_SKEW_MS = 2_000;
const TOOL_TIMEOUT_MS = 3_000;
const FIX = 'install and run chrony (apt-get install chrony; systemctl enable --now chrony), then check `chronyc tracking` shows "Leap status : Normal"';

interface ToolRun {
  readonly ok: boolean;
  readonly stdout: string;
  /** The tool is not installed. */
  readonly missing: boolean;
  readonly error?: string;
}

function runTool(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<ToolRun> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: TOOL_TIMEOUT_MS, env: { ...env, LC_ALL: 'C' } }, (err, stdout, stderr) => {
      if (err === null) return resolve({ ok: true, stdout, missing: false });
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      resolve({ ok: false, stdout, missing, error: (stderr.trim().split('\n')[0] || err.message).slice(0, 200) });
    });
  });
}

/** `chronyc -n tracking` output -> leap status and the system clock's offset from NTP time (ms, + = fast). */
export function parseChronyTracking(text: string): { leap: string; offsetMs: number } | undefined {
  const leap = /^Leap status\s*:\s*(.+)$/m.exec(text)?.[1]?.trim();
  const sys = /^System time\s*:\s*([\d.]+) seconds (fast|slow) of NTP time/m.exec(text);
  if (leap === undefined || sys === null) return undefined;
  const ms = Number(sys[1]) * 1000;
  return { leap, offsetMs: sys[2] === 'fast' ? ms : -ms };
}

export async function checkClock(env: NodeJS.ProcessEnv, upstreamDate: DateSample | undefined): Promise<Finding> {
  const id = 'clock-sync';
  const chrony = await runTool('chronyc', ['-n', 'tracking'], env);
  if (!chrony.missing) {
    if (!chrony.ok) return fail(id, `chronyc is installed but chronyd does not answer: ${chrony.error ?? ''}`, 'systemctl enable --now chrony', { source: 'chronyc' });
    const t = parseChronyTracking(chrony.stdout);
    if (t === undefined) return fail(id, 'chronyc tracking printed nothing readable', FIX, { source: 'chronyc' });
    const data = { source: 'chronyc', leap: t.leap, offsetMs: t.offsetMs };
    if (t.leap !== 'Normal') return fail(id, `chrony: Leap status "${t.leap}": the clock is not synchronised`, 'check chronyd reaches its servers (chronyc sources -v; UDP 123 outbound)', data);
    if (Math.abs(t.offsetMs) > MAX_OFFSET_MS) return fail(id, `chrony: synchronised but ${t.offsetMs.toFixed(1)} ms off NTP time (> ${MAX_OFFSET_MS} ms)`, 'let chrony converge, or step it now: chronyc makestep', data);
    return pass(id, `chrony: synchronised, ${t.offsetMs.toFixed(3)} ms from NTP time`, data);
  }
  const tdc = await runTool('timedatectl', ['show', '-p', 'NTPSynchronized', '--value'], env);
  if (tdc.ok) {
    const v = tdc.stdout.trim();
    if (v === 'yes') return pass(id, 'timedatectl: NTPSynchronized=yes (the kernel clock is disciplined)', { source: 'timedatectl' });
    return fail(id, `timedatectl: NTPSynchronized=${v || '(empty)'}: the clock is not synchronised`, FIX, { source: 'timedatectl' });
  }
  if (upstreamDate !== undefined) {
    // The Date header truncates to the second: the upstream's real time at that moment is in [server, server + 1 s).
    const skew = upstreamDate.localMs - upstreamDate.serverMs;
    const data = { source: 'upstream Date header', skewMs: Math.round(skew) };
    const note = 'neither chronyc nor timedatectl answers here (no chrony, no systemd as PID 1)';
    if (skew < -MAX_DATE_SKEW_MS || skew > 1000 + MAX_DATE_SKEW_MS) {
      return fail(id, `${note}; this clock is ${Math.round(skew)} ms from the upstream's Date header: wrong by seconds`, FIX, data);
    }
    return pass(id, `${note}; this clock agrees with the upstream's Date header to its 1 s resolution (coarse: install chrony for a real check)`, data);
  }
  return skip(id, `neither chronyc nor timedatectl answers here (${tdc.missing ? 'no timedatectl' : tdc.error ?? ''}) and no upstream Date header to compare with`);
}
