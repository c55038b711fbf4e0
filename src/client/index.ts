// `slotrelay/client`, the package entry of the client library (package.json exports "./client" -> the emitted
// dist/src/client/index.js and its .d.ts). It re-exports the library's own modules only: nothing from the server, no
// runtime dependency (test/unit/client/import-graph.test.ts walks the emitted imports). Usage: docs/client.md.
export { RelayClient, DEFAULT_TIMEOUT_MS, pubsubUrlOf, submitUrlOf, type RelayClientOptions } from './relay-client.js';
export { DEFAULT_MAX_QUEUED_UPDATES, isFinalUpdate } from './receipt-stream.js';
export {
  SlotrelayError,
  RelaySubmitError,
  RpcError,
  LeaderSlotsUnavailableError,
  IncompatibleRelayError,
  TransportUnavailableError,
  CLIENT_REASONS,
  type ClientReason,
  type SlotrelayErrorFields,
} from './errors.js';
export {
  COMPUTE_BUDGET_PROGRAM_ID,
  DEFAULT_PRICE_PERCENTILE,
  MAX_PRICE_PERCENTILE,
  MIN_PRICE_PERCENTILE,
  feePercentile,
  kitComputeUnitPriceInstruction,
  priorityFeeLamports,
  setComputeUnitPriceData,
  v1PriorityFeeConfig,
  web3ComputeUnitPriceInstruction,
  type KitComputeUnitPriceInstruction,
  type V1PriorityFeeConfig,
  type Web3Module,
} from './fees.js';
export { TransactionFormatError, firstSignature, transactionSignature } from './transaction-signature.js';
export { DEFAULT_LEADER_SLOTS_POLICY, pickBestRoute, routeOfProvider, type LeaderSlotsPolicy } from './leader-slots.js';
export { QUIC_UNAVAILABLE_MESSAGE, type SubmitRequest, type SubmitTransport, type SubmitTransportFactory, type TransportContext } from './transport.js';
export { WireTransaction, bytesToBase64, type KitTransactionLike, type ReadonlyBytes, type SerializableTransaction, type TransactionInput } from './wire-transaction.js';
export type { DispatcherLike, FetchLike, RequestInitLike, ResponseLike } from './http-post.js';
export {
  ROUTE_NAMES,
  type BestRoute,
  type LeaderLocation,
  type LeaderSlotRow,
  type LeaderSlotsResult,
  type PingToLeader,
  type PrioritizationFee,
  type ReceiptExecution,
  type ReceiptLanding,
  type ReceiptUpdate,
  type RelayAlert,
  type RouteReceipt,
  type RouteName,
  type RouteScore,
  type SubmitOptions,
  type SubmitResult,
  type TransactionReceipt,
  type NotLandedReason,
  type AdaptiveDecision,
  type TransportKind,
  type TxPath,
  type UnacknowledgedSubmitResult,
} from './types.js';
