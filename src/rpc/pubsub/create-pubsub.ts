// Builds the JSON-RPC host's PubSub from the config (cold: once at start, front thread): null when it is off
// (jsonRpc.pubsub.enabled false, or no JSON-RPC host). The upstream PubSub is upstream.wsUrl, else derived from
// upstream.rpcUrl (the embedded localnet's when none is configured: its facade serves PubSub on rpc port + 1).
import type { Config } from '../../config/schema.js';
import type { KeyTable } from '../../admission/key-table.js';
import type { ResponseOptions } from '../../http/response.js';
import type { Logger } from '../../log/logger.js';
import { urlForLog } from '../../log/url-for-log.js';
import { PubsubServer } from './pubsub-server.js';
import { SubscriptionHub } from './subscription-hub.js';
import { upstreamWsUrl } from './upstream-ws-url.js';
import type { ReceiptStreamFactory } from './receipt-stream-port.js';

export interface PubsubFrontDeps {
  readonly responseOptions: ResponseOptions;
  readonly metrics: { countRejection(reason: string): void };
}

export function createPubsub(config: Readonly<Config>, keys: KeyTable, log: Logger, front: PubsubFrontDeps, receiptStream: ReceiptStreamFactory | null = null): PubsubServer | null {
  if (!config.jsonRpc.pubsub.enabled || !config.rpcHost.enabled || config.upstream.rpcUrl === undefined) return null;
  const url = upstreamWsUrl(config.upstream.rpcUrl, config.upstream.wsUrl);
  log.info({ event: 'pubsub_upstream', url: urlForLog(url) }, 'PubSub relayed to the upstream PubSub');
  const hub = new SubscriptionHub(url, config.upstream.requestTimeoutMs, keys.entries, log);
  return new PubsubServer({
    keys,
    hub,
    log,
    responseOptions: front.responseOptions,
    maxMessageBytes: config.http.maxBodyBytes,
    maxBatchSize: config.http.maxBatchSize,
    maxBufferedBytes: config.jsonRpc.pubsub.maxBufferedBytes,
    receiptStream: receiptStream?.(() => hub.allocateId()) ?? null,
    countRejection: (reason) => front.metrics.countRejection(reason),
  });
}
