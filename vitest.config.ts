import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Integration tests start real servers (child processes from dist/), so files run in separate forks and each test
// gets generous time; timing targets live in bench/, never here.
//
// Two groups, one after the other (sequence.groupOrder):
// 1. TWO AT A TIME (two forks): every file but the ALONE ones. Most integration files spend their time waiting (a relay
//    starting, a localnet's slots, a timer, a child's exit), not computing: two side by side on the 2-core box took
//    the relay directory from 312 s to 141 s with the same 191 tests passing (bench/results/suite-time.md). The soak smoke
//    (a minute of load) starts first, and the three files that mostly wait on uWS's real timers next to it, as before.
// 2. ALONE, one file at a time (one fork): files that load both cores themselves (the fuzzers, the bench report, the
//    2,000-submission log test, QUIC floods, the QUIC memory-after-abuse test, which reads RSS) or whose assertions
//    are latencies measured against injected delays (multi-region, network model, ping window, idle ping): a
//    neighbour's CPU would show up in their figures. And the files whose relays keep a default port (the status
//    page's 8890): `slotrelay start` without a config (newcomer) and the sandboxed relay. A new file of either kind
//    goes on this list.
const SOAK = 'test/integration/soak/soak-smoke.test.ts';
const TIMER_BOUND = ['test/integration/relay/keep-alive.test.ts', 'test/integration/relay/slowloris.test.ts', 'test/integration/relay/slowloris-keep-alive.test.ts'];
const ALONE = [
  'test/integration/bench/**',
  'test/integration/fuzz/**',
  'test/integration/start/newcomer.test.ts',
  'test/integration/deploy/sandboxed-relay.test.ts',
  'test/integration/cluster/multi-region.test.ts',
  'test/integration/cluster/region-delays.test.ts',
  'test/integration/telemetry/egress-measurements.test.ts',
  'test/integration/telemetry/ping-window.test.ts',
  'test/integration/telemetry/idle-ping.test.ts',
  'test/integration/localnet/network-model.test.ts',
  'test/integration/localnet/congestion.test.ts',
  'test/integration/ingress/quic-ingress-stream-credit.test.ts',
  'test/integration/ingress/quic-ingress-initial-flood.test.ts',
  'test/integration/ingress/quic-ingress-backpressure.test.ts',
  'test/integration/ingress/quic-ingress-memory.test.ts',
  'test/integration/egress/failing-route-logs.test.ts',
];

/** The soak first (one fork to itself for its minute), then the timer-bound files, then the rest as vitest orders them. */
class SoakFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => (f.moduleId.endsWith(SOAK) ? 0 : TIMER_BOUND.some((t) => f.moduleId.endsWith(t)) ? 1 : 2);
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    pool: 'forks',
    // Forks are reused from file to file (isolate: false): re-importing web3.js, kit and the relay's modules per file
    // was 108 s of a 603 s suite; shared, it is 8 s (454 s in all, the same 545 tests passing). Test files start
    // their servers in child processes on ephemeral ports and close what they open in their hooks, so nothing leaks
    // from file to file, nor between the two forks.
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
    sequence: { sequencer: SoakFirst },
    // Concurrent tests of one file (it.concurrent) run at most this many at once (vitest's default is 5). The files
    // that use it wait on real uWS timers per build side by side; slowloris-keep-alive has six such cases, and a
    // sixth queued behind five waited for the timers a second time.
    maxConcurrency: 6,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: process.env.CI ? ['verbose'] : ['default'],
    projects: [
      {
        extends: true,
        test: { name: 'two-at-a-time', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...ALONE], sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'alone', include: ALONE.map((p) => (p.endsWith('**') ? `${p}/*.test.ts` : p)), sequence: { groupOrder: 1 }, poolOptions: { forks: { singleFork: true } } },
      },
    ],
  },
});
