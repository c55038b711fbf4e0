import { defineConfig } from 'vitest/config';

// Integration tests start real servers (child processes from dist/), so files run in separate forks and
// each test gets generous time; timing targets live in bench/, never here. One file at a time: each integration file
// already runs a relay (front + egress + telemetry threads), a localnet or QUIC peers, i.e. more busy threads than
// the 2-core box has; two files at once made QUIC handshakes time out. About 7.5 min for the suite on the 2-core box.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // One fork reused for every file (isolate: false): re-importing web3.js, kit and the relay's modules per file
    // was 108 s of a 603 s suite; shared, it is 8 s (454 s in all, the same 545 tests passing). Test files start
    // their servers in child processes and close what they open in their hooks, so nothing leaks from file to file.
    poolOptions: { forks: { maxForks: 1, minForks: 1, isolate: false } },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: process.env.CI ? ['verbose'] : ['default'],
  },
});
