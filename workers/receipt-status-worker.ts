// Receipts' status thread entry (a dedicated worker_thread, supervised by src/receipts/status-thread.ts): the landing
// tracker's getSignatureStatuses calls, off the front. Everything lives in src/receipts/status-thread-main.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { publishThreadMemory } from '../src/metrics/thread-memory.js';
import { runStatusThread, type StatusThreadData } from '../src/receipts/status-thread-main.js';

publishThreadMemory('receipt-status');
runStatusThread(workerData as StatusThreadData, parentPort!);
