// A reload's log level reaching another thread's loggers (src/log/log-level-message.ts): applied from the port, other
// messages on the same port ignored, and the port left unref'd (it must not keep a thread alive).
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { followLogLevel, logLevelMessage } from '../../../src/log/log-level-message.js';

describe('followLogLevel', () => {
  it('sets every logger given to the level posted, and ignores other messages', async () => {
    const { port1, port2 } = new MessageChannel();
    const a = createLogger('info', 'egress');
    const b = createLogger('info', 'egress');
    let changes = 0;
    followLogLevel(port2, [a, b], () => changes++);
    port1.postMessage({ kind: 'latency', level: 'debug' });
    port1.postMessage(logLevelMessage('debug'));
    await new Promise((r) => setTimeout(r, 50));
    expect([a.level, b.level, changes]).toEqual(['debug', 'debug', 1]);
    port1.postMessage(logLevelMessage('silent'));
    await new Promise((r) => setTimeout(r, 50));
    expect([a.level, b.level, changes]).toEqual(['silent', 'silent', 2]);
    port1.close();
  });
});
