// What a method handler knows about the request it serves (front thread, one object per request).
import type { KeyEntry } from './key-table.js';
import type { RequestState } from '../http/response.js';

export interface CallContext {
  readonly key: KeyEntry;
  readonly state: RequestState;
  /** Effective route set for submissions (request ∩ key policy ∩ routes this relay can deliver by). */
  readonly routeMask: number;
}
