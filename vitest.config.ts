import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Integration tests start real servers (child processes from dist/), so files run in separate forks and each test
// gets generous time; timing targets live in bench/, never here.
//
// Two groups, one after the other (sequence.groupOrder):
// 1. SIDE_BY_SIDE, two files at a time: the soak smoke (a minute of load: the one file that keeps both cores busy)
//    on one fork, and on the other, one after another, the three files that mostly wait on uWS's real 8-12 s timers
//    with near-idle relays (slow clients, idle keep-alive). The waits cost wall time, not CPU: 90-110 s for the four
//    side by side instead of 150-160 s one after another (measured on the loaded 2-core box). They need dist/ built
//    (`make test` builds it first): the soak's own freshness check must not be the one rebuilding it under the others.
// 2. Everything else one file at a time: each integration file already runs a relay (front + egress + telemetry
//    threads), a localnet or QUIC peers, i.e. more busy threads than the 2-core box has; two such files at once made
//    QUIC handshakes time out.
const SOAK = 'test/integration/soak/soak-smoke.test.ts';
const SIDE_BY_SIDE = [SOAK, 'test/integration/relay/keep-alive.test.ts', 'test/integration/relay/slowloris.test.ts', 'test/integration/relay/slowloris-keep-alive.test.ts'];

/** The soak first, so that it has one fork to itself while the timer-bound files take turns on the other. */
class SoakFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isSoak = (f: TestSpecification): boolean => f.moduleId.endsWith(SOAK);
    return [...sorted.filter(isSoak), ...sorted.filter((f) => !isSoak(f))];
  }
}

export default defineConfig({
  test: {
    pool: 'forks',
    // Forks are reused from file to file (isolate: false): re-importing web3.js, kit and the relay's modules per file
    // was 108 s of a 603 s suite; shared, it is 8 s (454 s in all, the same 545 tests passing). Test files start
    // their servers in child processes and close what they open in their hooks, so nothing leaks from file to file.
    // Two forks at most (side-by-side); one-at-a-time runs in one (singleFork).
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
      { extends: true, test: { name: 'side-by-side', include: SIDE_BY_SIDE, sequence: { groupOrder: 0 } } },
      {
        extends: true,
        test: {
          name: 'one-at-a-time',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SIDE_BY_SIDE],
          sequence: { groupOrder: 1 },
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
