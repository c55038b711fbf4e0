// Telemetry thread entry (a dedicated worker_thread, supervised by src/telemetry/telemetry-thread.ts): attach to the
// snapshot buffer and follow the cluster. Everything lives in src/telemetry/telemetry-main.ts; the region share of a
// multi-region relay (src/cluster/) is handed in here, so telemetry does not import the cluster layer.
import { parentPort, workerData } from 'node:worker_threads';
import { publishThreadMemory } from '../src/metrics/thread-memory.js';
import { TelemetryShare } from '../src/cluster/telemetry-share.js';
import { runTelemetryWorker } from '../src/telemetry/telemetry-thread.js';

publishThreadMemory('telemetry');
runTelemetryWorker(workerData, parentPort!, (cluster, region, regions, log, onStatus) => new TelemetryShare(cluster, region, regions, log, onStatus));
