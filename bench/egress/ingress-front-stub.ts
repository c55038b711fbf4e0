// Bench helper (the bench's main thread; cold per connection, one message per stream): the front thread's half of the
// QUIC ingress (src/ingress/front-ingress.ts) reduced to what the QUIC thread needs back, so quic-thread.bench.ts can
// host the real ingress listener in the real QUIC thread without a whole relay. Every certificate is key 0, every
// uni stream is accepted (a uniVerdict with code 0, which the listener counts) and dropped: nothing is decoded or
// published into an egress ring, so the egress records the bench measures stay the producer's alone. What the QUIC
// thread does per stream (datagrams, decryption, stream reads, the request ring, the verdict) is exactly the relay's;
// the front's own work (intake, key bucket) is on this thread, as it is on the relay's front thread.
import { pack } from 'msgpackr';
import { MSG_KINDS, ingressHeaderOf, publishIngress, pushIngress } from '../../src/shm/ingress-layout.js';
import { MessageRingConsumer, MessageRingProducer } from '../../src/shm/message-ring.js';
import type { QuicIngressChannels } from '../../src/ingress/start-quic-ingress.js';

const PER_TURN = 256;
const IDLE_WAIT_MS = 100;
const EMPTY = new Uint8Array(0);
const REFUSED = pack({ accepted: false, error: { code: -32602, reason: 'invalid_params', message: 'bench stub: uni streams only' } });

export class IngressFrontStub {
  /** Uni streams answered accepted. */
  uniStreams = 0;
  authenticated = 0;
  private readonly requests: MessageRingConsumer;
  private readonly replies: MessageRingProducer;
  private stopped = false;
  private loop: Promise<void> | null = null;

  constructor(channels: QuicIngressChannels) {
    this.requests = new MessageRingConsumer(channels.requests);
    this.replies = new MessageRingProducer(channels.replies);
  }

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    const ring = this.requests;
    const replies = this.replies;
    const header = ingressHeaderOf(ring.header);
    while (!this.stopped && !ring.stopRequested()) {
      let n = 0;
      // Like the front: take a request only when its answer has a slot.
      while (n < PER_TURN && replies.free() > 0 && ring.take()) {
        const h = header;
        if (h.kind === MSG_KINDS.uniStream) {
          this.uniStreams++;
          replies.reserve();
          publishIngress(replies, MSG_KINDS.uniVerdict, 0, h.keyId, h.connId, h.streamId, 0, 0, 0);
        } else if (h.kind === MSG_KINDS.authRequest) {
          this.authenticated++;
          pushIngress(replies, MSG_KINDS.authResult, EMPTY, 0, h.connId, 0, 0, 0, 0);
        } else if (h.kind === MSG_KINDS.bidiStream) {
          pushIngress(replies, MSG_KINDS.bidiReply, REFUSED, h.keyId, h.connId, h.streamId, 0, 1, 0);
        }
        ring.release();
        n++;
      }
      if (n === PER_TURN || (ring.available() > 0 && replies.free() === 0)) await new Promise<void>((resolve) => setImmediate(resolve));
      else await ring.waitForMessages(IDLE_WAIT_MS);
    }
  }
}
