// ioredis, loaded on first use (cold; main and telemetry threads). A relay without cluster.url never loads it: its
// module graph cost ~100 ms of CPU per thread at every start (the front and the telemetry thread both import the
// engine link), for a client only a multi-region relay uses. ioredis is CommonJS, so a synchronous require keeps the
// link's constructor synchronous.
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

const requireCjs = createRequire(import.meta.url);
let loaded: typeof Redis | null = null;

/** The ioredis client class, required the first time a connection is made. */
export function redisClass(): typeof Redis {
  loaded ??= (requireCjs('ioredis') as typeof import('ioredis')).Redis;
  return loaded;
}
