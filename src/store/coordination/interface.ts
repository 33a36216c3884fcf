export type StoreEvent =
  | { type: 'account'; id: string; keyHashes: string[] }
  | { type: 'prices' }
  /** An address that sent too many invalid keys across every instance, to be refused for `ms`. */
  | { type: 'blocked'; address: string; ms: number }
  /** Empty every gateway's pass-through cache: of one path, or (null) all of it. */
  | { type: 'cache_purge'; path: string | null };

/** How long a reservation of an invalid-key attempt lasts unsettled: far longer than any lookup. */
export const RESERVATION_MS = 5000;

/** The invalid-key throttle's rule (config `limits.invalid_key_throttle`). */
export interface ThrottleRule {
  maxAttempts: number;
  windowMs: number;
  blockMs: number;
}

/**
 * What an instance tells the shared count of an address's invalid-key attempts: reservations it
 * wants, and what became of earlier ones. A reservation is held by an attempt whose key is being
 * looked up, so attempts in flight count before they are known to fail.
 */
export interface AttemptChange {
  /** Reservations wanted now. */
  want: number;
  /** Reservations given back: their keys were found, or were never tried. */
  released: number;
  /** Reservations whose keys were unknown: each becomes an invalid key. */
  failed: number;
  /** Invalid keys that held no reservation (malformed, or a key tried without one). */
  unreserved: number;
}

/** The shared count's answer to an AttemptChange. */
export interface AttemptGrant {
  /** Reservations granted, at most `want`. */
  granted: number;
  /** Whether invalid keys and reservations are still below the limit after the grant. */
  room: boolean;
  /** Milliseconds the address is blocked for (0: not blocked); nothing is granted then. */
  blockedMs: number;
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
   * The invalid-key attempts of `address` across every instance: settles earlier reservations,
   * counts invalid keys, and reserves up to `want` more while invalid keys and reservations stay
   * below `maxAttempts` within the window. The change whose invalid keys reach `maxAttempts`
   * blocks the address for `blockMs` and announces `blocked`; while blocked, nothing is granted.
   * A reservation not settled within RESERVATION_MS is forgotten (its instance is gone).
   */
  invalidKeyAttempts(address: string, rule: ThrottleRule, change: AttemptChange): Promise<AttemptGrant>;
  /** Announces `cache_purge` to every instance (this one included): the CLI purges through here too. */
  purgeCache(path: string | null): Promise<void>;
}
