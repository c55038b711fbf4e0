// Status thread entry (a dedicated worker_thread, supervised by src/rpc/status/status-thread.ts from the thread that
// owns it: the front for the receipts, an egress consumer thread for its rebroadcasts): getSignatureStatuses calls
// off the thread that carries transactions. Everything lives in src/rpc/status/status-thread-main.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { publishThreadMemory } from '../src/metrics/thread-memory.js';
import { runStatusThread, type StatusThreadData } from '../src/rpc/status/status-thread-main.js';

const data = workerData as StatusThreadData;
publishThreadMemory(data.role);
runStatusThread(data, parentPort!);
