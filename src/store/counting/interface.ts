import type { ThresholdContext } from '../../events/event.js';

/**
 * The usage thresholds of an account's period not yet seen reached (event.ts `alertList`), and
 * what their event says. The store drops the entries a reply shows reached, so once every
 * threshold is behind a request carries nothing for them.
 */
export interface Alerts {
  list: string;
  /** The first count of `list` (Infinity when empty). */
  next: number;
  context: ThresholdContext;
}

/** What the caller worked out from its copy of the account, for one metered request. */
export interface ConsumeSpec {
  accountId: string;
  revision: number;
  periodId: string;
  limit: number;
  /** When the counter may be forgotten: end of the period plus retention. */
  expireAtMs: number;
  /**
   * The store's own note on this spec (what it looked up for it), kept on the spec: the meter
   * builds one spec per cached account and period, so a warm request finds it without a lookup.
   */
  storeMemo?: object;
  /** Thresholds to raise `usage.threshold` at; absent: none. */
  alerts?: Alerts;
}

/**
 * The outcome of one metered request. `changed` means the account is not at the revision the
 * caller had (or is gone): nothing was counted, reload it and decide again.
 */
export type ConsumeResult =
  | { kind: 'ok'; used: number }
  | { kind: 'exhausted'; used: number }
  | { kind: 'inactive' }
  | { kind: 'changed' };

/** Where `consumeInto` delivers: exactly one of the two is called, once. */
export interface ConsumeReceiver {
  consumed(result: ConsumeResult): void;
  /** STORE_UNAVAILABLE when the store could not be reached or did not answer in time. */
  failed(err: Error): void;
}

/**
 * The request counters: one per account and period, checked against the account's revision and
 * status in the same atomic step that counts. Proven for every backend by
 * test/store/contract/counting.ts.
 */
export interface CountingStore {
  /** Atomically: refuse if changed or inactive, refuse if used ≥ limit, else count one. */
  consume(spec: ConsumeSpec): Promise<ConsumeResult>;
  /**
   * `consume` for the request path, without a promise: the memory store answers before it
   * returns; the Redis store sends the consumes of one event-loop turn as one script call.
   */
  consumeInto(spec: ConsumeSpec, receiver: ConsumeReceiver): void;
  /**
   * Takes back one request that `consume` counted but whose answer failed (the origin of a
   * pass-through route failed). Never goes below zero.
   */
  refund(accountId: string, periodId: string): Promise<void>;
  /** Requests counted for the account in the period (0 when none). */
  usage(accountId: string, periodId: string): Promise<number>;
  /**
   * Moves threshold crossings that a consume recorded but no gateway moved to the webhook outbox
   * (it died in between) there, with the context `resolve` gives. Returns how many were found.
   */
  recoverCrossings(resolve: (accountId: string, periodId: string) => Promise<ThresholdContext | null>): Promise<number>;
}
