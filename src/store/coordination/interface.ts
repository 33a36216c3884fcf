export type StoreEvent =
  | { type: 'account'; id: string; keyHashes: string[] }
  | { type: 'prices' }
  /** An address that sent too many invalid keys across every instance, to be refused for `ms`. */
  | { type: 'blocked'; address: string; ms: number }
  /** Empty every gateway's pass-through cache: of one path, or (null) all of it. */
  | { type: 'cache_purge'; path: string | null };

/** The invalid-key throttle's rule (config `limits.invalid_key_throttle`). */
export interface ThrottleRule {
  maxAttempts: number;
  windowMs: number;
  blockMs: number;
}

/**
 * What the instances of one deployment share besides data: leases, notes, the announcements of
 * every change, and the invalid-key throttle's counts. Proven for every backend by
 * test/store/contract/coordination.ts.
 */
export interface CoordinationStore {
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
   * Counts `attempts` (default 1) invalid keys from `address` across every instance; the report
   * that reaches `maxAttempts` within the window announces `blocked`. The memory store, a single
   * process, has nothing to share.
   */
  reportInvalidKey(address: string, rule: ThrottleRule, attempts?: number): Promise<void>;
  /** Announces `cache_purge` to every instance (this one included): the CLI purges through here too. */
  purgeCache(path: string | null): Promise<void>;
}
