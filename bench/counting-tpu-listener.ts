// A TPU listener on loopback that only counts the transactions it receives: the far end of the QUIC benches and of
// scripts/quiche-thread-stress.ts. Cold: set-up only.
import { TpuListener } from '../src/localnet/tpu-listener.js';

export interface CountingListener {
  readonly listener: TpuListener;
  readonly port: number;
  /** Transactions received so far (stream read to FIN). */
  received(): number;
}

export async function startCountingListener(maxStreams = 128): Promise<CountingListener> {
  let received = 0;
  const listener = new TpuListener({
    host: '127.0.0.1',
    port: 0,
    validatorIdentity: '11111111111111111111111111111111',
    maxStreams,
    onTransaction: () => void received++,
  });
  await listener.start();
  return { listener, port: listener.address().port, received: () => received };
}
