// Bench helper (worker thread): a localnet TPU listener with a 128-stream limit, off the sender's event loop.
// Posts {port} once listening; answers any message with {received}.
import { parentPort } from 'node:worker_threads';
import { TpuListener } from '../../src/localnet/tpu-listener.js';

let received = 0;
const listener = new TpuListener({ host: '127.0.0.1', port: 0, validatorIdentity: 'bench', maxStreams: 128, onTransaction: () => void received++ });
await listener.start();
parentPort!.postMessage({ port: listener.address().port });
parentPort!.on('message', (m: string) => {
  if (m === 'stop') void listener.stop().then(() => process.exit(0));
  else parentPort!.postMessage({ received });
});
