import { defineConfig } from 'vitest/config';

// Integration tests start real servers (child processes from dist/), so files run in separate forks and
// each test gets generous time; timing targets live in bench/, never here. One file at a time: each integration file
// already runs a relay (front + egress + telemetry threads), a localnet or QUIC peers, i.e. more busy threads than
// the 2-core box has; two files at once made QUIC handshakes time out. ~2m40s for the suite this way.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 1, minForks: 1 } },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: process.env.CI ? ['verbose'] : ['default'],
  },
});
