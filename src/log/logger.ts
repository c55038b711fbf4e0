// pino structured logging (cold setup; log calls are off the hot path except failures). One root logger per process,
// one child per thread ({thread: its role, src/threads/roles.ts: 'front', 'egress', 'quic-egress', ...}). API keys never reach logs: records carry a key
// id/name only, and redaction covers the header and query carriers in case a request object is ever logged.
import { destination, pino, type Logger, type LevelWithSilent } from 'pino';

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
  // Synchronous writes to fd 1: no extra logging thread competing for two cores, and nothing lost on crash. Written
  // to the fd itself, not process.stdout: in a worker thread process.stdout is forwarded to the main thread by
  // message, and lines still in flight were lost when the pool was destroyed at shutdown (the shutdown report).
  const root = pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination({ dest: 1, sync: true }),
  );
  return root.child({ thread, ...bindings });
}
