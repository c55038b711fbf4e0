// A reload's new log.level on its way to another thread (cold): posted by the main thread (src/reload/, through
// EgressPool and TelemetryThread) on a port the thread already has, applied to that thread's loggers.
import type { MessagePort } from 'node:worker_threads';
import type { Logger } from './logger.js';

export const LOG_LEVEL_KIND = 'slotrelay.log-level';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface LogLevelMessage {
  readonly kind: typeof LOG_LEVEL_KIND;
  readonly level: LogLevel;
}

export function logLevelMessage(level: LogLevel): LogLevelMessage {
  return { kind: LOG_LEVEL_KIND, level };
}

export function isLogLevelMessage(m: unknown): m is LogLevelMessage {
  return typeof m === 'object' && m !== null && (m as { kind?: unknown }).kind === LOG_LEVEL_KIND && typeof (m as { level?: unknown }).level === 'string';
}

/**
 * Apply the levels posted on `port` to `loggers` (and tell `onChange`). The port stays unref'd: listening must not
 * keep a thread alive that would otherwise end.
 */
export function followLogLevel(port: MessagePort, loggers: readonly Logger[], onChange?: () => void): void {
  port.on('message', (m: unknown) => {
    if (!isLogLevelMessage(m)) return;
    for (const l of loggers) l.level = m.level;
    onChange?.();
  });
  port.unref();
}
