import type { ThresholdContext } from '../../events/event.js';
import type { StoredAccount } from '../accounts/account-record.js';

/** Raise `usage.threshold` for `percent` when the period's count reaches `count`. */
export interface Threshold {
  readonly count: number;
  readonly percent: number;
}

/**
 * The usage thresholds of an account's period not yet seen reached (worked out by the quota
 * layer, thresholds.ts), and what their event says. The store drops the entries a reply shows
 * reached (alerts.ts `dropReached`), so once every threshold is behind a request carries nothing for them.
 */
export interface Alerts {
  /** By count, lowest first. Replaced, never changed in place: a store may key an encoding on it. */
  pending: readonly Threshold[];
  /** The first count of `pending` (Infinity when empty): below it a request crosses nothing. */
  next: number;
  context: ThresholdContext;
}

/** What the caller worked out from its copy of the account, for one metered request. */
export interface ConsumeSpec {
  accountId: string;
  revision: number;
  periodId: string;
  limit: number;
  /** When the counter, its days and its record may be forgotten: end of the period plus retention. */
  expireAtMs: number;
  /** What the period's record holds besides its count (written with the period's first request). */
  record?: PeriodMeta;
  /**
   * The store's own note on this spec (what it looked up for it), kept on the spec: the meter
   * builds one spec per cached account and period, so a warm request finds it without a lookup.
   */
  storeMemo?: object;
  /** Thresholds to raise `usage.threshold` at; absent: none. */
  alerts?: Alerts;
  /**
   * The id of a key of the account whose `last_used_on` becomes the consume's day when the
   * request is counted: set by the meter while its copy of the key names another day, so the
   * day a key last worked costs one write per key per day, in the consume's own round trip.
   * The store clears it once it has sent it (a refused request notes nothing).
   */
  touch?: string;
  /**
   * Set by the meter when it counts from an entry its cache dropped for room: the reply of a
   * request checked against the allowance (ok, exhausted, burst) carries the account as stored
   * at the revision checked (`account`), from which the meter caches it again, so a miss costs
   * the consume's round trip alone. The store clears it once it has sent it.
   */
  load?: boolean;
  /**
   * What the count may reach: `limit` plus the overage. Absent: `limit`. Past `limit` requests
   * are counted (and raise thresholds) like any other; `limit` stays what the record shows.
   */
  cap?: number;
  /** At most `limit` admitted requests of the account in any `windowMs` (docs/plans.md); absent: none. */
  burst?: BurstSpec;
}

export interface BurstSpec {
  limit: number;
  windowMs: number;
}

/** Where an account stands in its burst window after a request (with a burst limit only). */
export interface BurstState {
  /** Admissions the window still has room for. */
  remaining: number;
  /** Milliseconds until that room next grows (an admission leaves the window); 0: it is empty. */
  resetMs: number;
}

/** A period as its record keeps it: the invoice line, with the count read beside it. */
export interface PeriodMeta {
  plan: string;
  kind: 'trial' | 'monthly';
  startMs: number;
  endMs: number;
}

/**
 * One period of an account as the ledger has it: its record (plan and limit as they stand at
 * its end, or now), its count, and the days it was counted on (YYYY-MM-DD in the configured
 * zone, oldest first; they sum to `used`). `changes` are the plans it had before, oldest first.
 */
export interface PeriodRecord extends PeriodMeta {
  periodId: string;
  /** Before grants: the plan's or the account's. */
  limit: number;
  /** Requests granted in the period (top-ups, AccountStore `addGrant`); 0 when none. */
  granted: number;
  used: number;
  days: Array<[day: string, requests: number]>;
  changes: PlanChange[];
}

/** A plan (or limit) an account left in the middle of a period: what applied until `atMs`. */
export interface PlanChange {
  atMs: number;
  plan: string;
  limit: number;
  /** The period's count when it changed. */
  used: number;
}

/**
 * The outcome of one metered request. `account`: the account as stored, when the spec asked for
 * it (`ConsumeSpec.load`). `changed` means the account is not at the revision the
 * caller had (or is gone): nothing was counted, reload it and decide again.
 */
export type ConsumeResult =
  | { kind: 'ok'; used: number; burst?: BurstState; account?: StoredAccount }
  | { kind: 'exhausted'; used: number; burst?: BurstState; account?: StoredAccount }
  /** Over the burst limit: nothing counted; `burst.resetMs` is when a request may be admitted. */
  | { kind: 'burst'; used: number; burst: BurstState; account?: StoredAccount }
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
  /**
   * Atomically: refuse if changed or inactive, refuse if used ≥ cap, refuse if over the burst
   * limit, else count one, in the
   * period's counter and in its bucket for `day` (YYYY-MM-DD in the configured zone, worked out
   * by the caller), so the days of a period always sum to its counter.
   */
  consume(spec: ConsumeSpec, day: string): Promise<ConsumeResult>;
  /**
   * `consume` for the request path, without a promise: the memory store answers before it
   * returns; the Redis store sends the consumes of one event-loop turn as one script call.
   */
  consumeInto(spec: ConsumeSpec, day: string, receiver: ConsumeReceiver): void;
  /**
   * Takes back one request that `consume` counted but whose answer failed (the origin of a
   * pass-through route failed), from the counter and from the day it was counted on, in one
   * atomic step. Never goes below zero.
   */
  refund(accountId: string, periodId: string, day: string): Promise<void>;
  /** Requests counted for the account in the period (0 when none). */
  usage(accountId: string, periodId: string): Promise<number>;
  /**
   * The periods of each account whose time overlaps [fromMs, toMs), oldest first, with their
   * days: what the exports and the usage history read. One call for a batch of accounts.
   */
  periodRecords(accountIds: string[], fromMs: number, toMs: number): Promise<PeriodRecord[][]>;
  /**
   * Notes on a period's record that the account's plan or limit changed at `atMs` (its record
   * keeps the plan it had until then, with the count at that moment) and what applies now; the
   * period then ends at `endMs` (earlier: the change ended it; later: an earlier period of the
   * same id goes on under the new plan). Nothing when the period has no record yet (no request
   * was counted in it).
   */
  recordPlanChange(
    accountId: string,
    periodId: string,
    atMs: number,
    now: { plan: string; limit: number; endMs: number },
  ): Promise<void>;
  /**
   * Moves threshold crossings that a consume recorded but no gateway moved to the webhook outbox
   * (it died in between) there, with the context `resolve` gives. Returns how many were found.
   */
  recoverCrossings(resolve: (accountId: string, periodId: string) => Promise<ThresholdContext | null>): Promise<number>;
}
