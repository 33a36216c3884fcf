import type { PriceSet } from '../prices/schema.js';

export type AccountStatus = 'active' | 'inactive';

export interface Account {
  id: string;
  status: AccountStatus;
  plan: string;
  /** Per-account allowance; null uses the plan's. */
  limit: number | null;
  /** Trial start or billing anchor, ISO 8601. */
  anchor: string;
  label: string;
  created_at: string;
  /** Bumped by every change, so a counter call made from a stale cached copy is refused. */
  revision: number;
}

/** An account as the store keeps it: with the SHA-256 hash of its key, never the key. */
export interface StoredAccount extends Account {
  key_hash: string;
}

export type AccountPatch = Partial<Pick<Account, 'status' | 'plan' | 'limit' | 'anchor' | 'label'>> & {
  key_hash?: string;
};

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

/** Which accounts a listing shows; an absent field matches every account. */
export interface AccountFilter {
  status?: AccountStatus;
  plan?: string;
  /** Matches when the account's label contains it, ignoring case (taken literally, never as a pattern). */
  label?: string;
}

/** One page of a listing, in id order. `next` is the last id looked at, to continue after; null at the end. */
export interface AccountPage {
  accounts: StoredAccount[];
  next: string | null;
}

export type StoreEvent =
  | { type: 'account'; id: string; keyHashes: string[] }
  | { type: 'prices' }
  /** An address that sent too many invalid keys across every instance, to be refused for `ms`. */
  | { type: 'blocked'; address: string; ms: number };

/** The invalid-key throttle's rule (config `limits.invalid_key_throttle`). */
export interface ThrottleRule {
  maxAttempts: number;
  windowMs: number;
  blockMs: number;
}

/**
 * The shared state of the gateway. The memory store and the Redis store implement it and are
 * proven by one contract suite (test/store/contract.ts).
 */
export interface Store {
  readonly kind: 'memory' | 'redis';
  findByKeyHash(keyHash: string): Promise<StoredAccount | null>;
  getAccount(id: string): Promise<StoredAccount | null>;
  createAccount(account: StoredAccount): Promise<void>;
  /** Applies the patch, bumps the revision and announces the change. Null when there is no such account. */
  updateAccount(id: string, patch: AccountPatch): Promise<StoredAccount | null>;
  /**
   * Accounts matching `filter` with ids after `after` (null: from the start), in id order, at
   * most `limit`. A page may hold fewer (even none) while `next` is not null: the Redis store
   * bounds the work of one call. Following `next` until null visits every match once.
   */
  listAccounts(filter: AccountFilter, after: string | null, limit: number): Promise<AccountPage>;
  /**
   * Removes the account and announces its key hash, so its key stops working everywhere.
   * Returns the account as it was; null when there is no such account.
   */
  deleteAccount(id: string): Promise<StoredAccount | null>;
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
  /** Price history, oldest first, one set per effective date. */
  listPriceSets(): Promise<PriceSet[]>;
  /** Adds a set (replacing one of the same date when `replace`) and announces it. Returns false when one existed and was kept. */
  putPriceSet(set: PriceSet, replace: boolean): Promise<boolean>;
  /**
   * `putPriceSet` for many sets, announced once, so no instance serves one of them as current on
   * the way. Returns how many were stored.
   */
  putPriceSets(sets: PriceSet[], replace: boolean): Promise<number>;
  /** Removes the set of that effective date and announces it. False when there was none. */
  deletePriceSet(date: string): Promise<boolean>;
  /**
   * Takes the named lease for `holder`, or renews it when `holder` has it, for `ttlMs`. True
   * while `holder` holds it. One instance of a deployment does a job (polling the origin).
   */
  lease(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up when `holder` has it, so another instance can take it at once. */
  releaseLease(name: string, holder: string): Promise<void>;
  /** A small shared record (the upstream poller's status), readable by every instance. */
  putNote(name: string, value: string): Promise<void>;
  getNote(name: string): Promise<string | null>;
  /** Changes made by any instance (including this one) are delivered here. */
  subscribe(listener: (event: StoreEvent) => void): void;
  /**
   * Counts an invalid key from `address` across every instance; the one that reaches
   * `maxAttempts` within the window announces `blocked`. The memory store, a single process,
   * has nothing to share.
   */
  reportInvalidKey(address: string, rule: ThrottleRule): Promise<void>;
  /** Resolves when the store answers. */
  ping(): Promise<void>;
  /** True once the store was found to have lost its data since this process started (Redis restarted empty). */
  dataLost(): boolean;
  close(): Promise<void>;
}
