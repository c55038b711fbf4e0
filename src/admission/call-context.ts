// What a method handler knows about the request it serves (front thread, one object per request).
import type { KeyEntry } from './key-table.js';
import type { RequestState } from '../http/response.js';

export interface CallContext {
  readonly key: KeyEntry;
  readonly state: RequestState;
  /**
   * Not read: a submission's routes are decided by src/admission/send-options.ts (issue #42). Optional so that
   * contexts built before that (unit and property tests) still type-check.
   */
  readonly routeMask?: number;
}
