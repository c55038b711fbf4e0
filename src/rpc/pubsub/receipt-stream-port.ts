// What the PubSub server needs of the receipt stream (front thread, cold): receiptSubscribe / receiptUnsubscribe and
// a socket's end. The stream itself is src/receipts/receipt-stream.ts (receipts sit above rpc in the layers, so
// main.ts hands it in through createPubsub as this port).
import type { KeyEntry } from '../../admission/key-table.js';
import type { TextBuilder } from '../../metrics/prometheus.js';

/** A client socket as the stream needs it (PubsubSocket). */
export interface ReceiptSocket {
  readonly key: KeyEntry;
  readonly closed: boolean;
  send(text: string): void;
}

export interface ReceiptStreamPort {
  /** The subscription id; throws a RelayError (subscription_limit). `signature` null = every receipt of the key. */
  subscribe(socket: ReceiptSocket, signature: string | null): number;
  /** After the subscribe's answer went out: a signature's receipt as it stands, when it exists. */
  catchUp(socket: ReceiptSocket, id: number): void;
  unsubscribe(socket: ReceiptSocket, id: number): boolean;
  socketClosed(socket: ReceiptSocket): void;
  render(tb: TextBuilder): void;
}

/** Builds the stream with the PubSub's subscription-id counter (ids shared with the relayed subscriptions). */
export type ReceiptStreamFactory = (nextId: () => number) => ReceiptStreamPort;
