// pino structured logging (cold setup; log calls are off the hot path except failures). One root logger per process,
// one child per thread ({thread: 'front' | 'egress' | 'telemetry'}). API keys never reach logs: records carry a key
// id/name only, and redaction covers the header and query carriers in case a request object is ever logged.
import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

const REDACT_PATHS = [
  'key',
  'apiKey',
  'headers["x-api-key"]',
  'headers["x-token"]',
  'headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["x-token"]',
  'req.headers.authorization',
  'query.key',
];

export function createLogger(level: LevelWithSilent, thread: string, bindings: Record<string, unknown> = {}): Logger {
  // Synchronous stdout: no extra logging thread competing for two cores, and nothing lost on crash.
  const root = pino({
    level,
    base: { pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
  return root.child({ thread, ...bindings });
}
