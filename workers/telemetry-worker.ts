// Telemetry thread entry (a dedicated worker_thread, supervised by src/telemetry/telemetry-thread.ts): attach to the
// snapshot buffer and follow the cluster. Everything lives in src/telemetry/telemetry-main.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { publishThreadMemory } from '../src/metrics/thread-memory.js';
import { runTelemetryWorker } from '../src/telemetry/telemetry-thread.js';

publishThreadMemory('telemetry');
runTelemetryWorker(workerData, parentPort!);
