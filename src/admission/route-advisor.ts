// Where intake asks whether the relay should send a transaction by more routes than its request named (front thread,
// HOT: one adjust() and one filed() per accepted transaction, allocation-free). Implemented by the adaptive routing
// (src/receipts/adaptive-routing.ts, docs/adaptive-routing.md); intake knows only this, as with the receipt sink.

export interface RouteAdvisor {
  /**
   * The routes the record goes with: `routeMask` (the request ∩ the key's policy ∩ what the relay runs, plus the
   * relay's own additions) and, for a leader that parks the direct route, partner routes that the key `keyId` allows
   * and the relay runs. Never a route outside those.
   */
  adjust(keyId: number, routeMask: number): number;
  /** The transaction adjust() was last asked about was accepted with receipt `seq` (0: receipts off): count and note it. */
  filed(seq: number): void;
}
