import { defineConfig } from 'vitest/config';

// Integration tests start real servers (child processes from dist/), so files run in separate forks and
// each test gets generous time; timing targets live in bench/, never here.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: process.env.CI ? ['verbose'] : ['default'],
  },
});
