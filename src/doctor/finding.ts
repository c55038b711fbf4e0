// What `slotrelay doctor` reports (cold, CLI only): one finding per check, with a status, what was seen and, unless it
// passed, what to do about it. The JSON output (--json) is these objects as they are: a stable shape for scripts.
//   pass: fine for the relay.  warn: works, but costs landing (e.g. an unstaked identity): exit code unaffected.
//   fail: a problem to fix (exit code 1).  skip: the check does not apply on this host or with this config; `detail`
//   says why (no cpufreq in a VM, no direct route configured).

export const FINDING_STATUSES = ['pass', 'warn', 'fail', 'skip'] as const;
export type FindingStatus = (typeof FINDING_STATUSES)[number];

export interface Finding {
  /** Stable check id: udp-buffers, open-files, clock-sync, cpu-governor, upstream-rpc, upstream-ws, upstream-grpc, leader-schedule, consensus, identity-stake, ports, uws-build. */
  readonly check: string;
  readonly status: FindingStatus;
  /** What was seen, in one or two sentences. */
  readonly detail: string;
  /** What to do about it (absent on pass and skip). */
  readonly fix?: string;
  /** The figures behind the verdict, for scripts. */
  readonly data?: Readonly<Record<string, unknown>>;
}

export const pass = (check: string, detail: string, data?: Record<string, unknown>): Finding => ({ check, status: 'pass', detail, ...(data ? { data } : {}) });
export const skip = (check: string, detail: string, data?: Record<string, unknown>): Finding => ({ check, status: 'skip', detail, ...(data ? { data } : {}) });
export const warn = (check: string, detail: string, fix: string, data?: Record<string, unknown>): Finding => ({ check, status: 'warn', detail, fix, ...(data ? { data } : {}) });
export const fail = (check: string, detail: string, fix: string, data?: Record<string, unknown>): Finding => ({ check, status: 'fail', detail, fix, ...(data ? { data } : {}) });
