import type { Config } from '../config/config-schema.js';
import type { KeyAttempts } from '../keys/attempts.js';
import type { AccountStore, BurstState, CoordinationStore, CountingStore } from '../store/store.js';
import type { AccountEntry, Refusal } from './account-entry.js';

/**
 * `day`: the ledger's day the request was counted on (YYYY-MM-DD), which a refund takes back from.
 * `burst`: where the account stands in its burst window, when it has a burst limit.
 */
export type MeterResult =
  | { kind: 'ok'; entry: AccountEntry; used: number; day: string; burst?: BurstState }
  | { kind: 'exhausted'; entry: AccountEntry; used: number; day: string; burst?: BurstState }
  /** Over the burst limit: not counted. */
  | { kind: 'burst'; entry: AccountEntry; used: number; day: string; burst: BurstState }
  | { kind: 'inactive' }
  | { kind: 'unknown' }
  /** The key was never looked up: its address is blocked by the invalid-key throttle. */
  | { kind: 'throttled' }
  /** The account is active but may not make this request (account-entry.ts `refusal`): never counted. */
  | { kind: 'refused'; reason: Exclude<Refusal, 'inactive'>; entry: AccountEntry };

/** The request an entry is judged for (account-entry.ts `refusal`); without one, the key alone (its status and expiry). */
export type { KeyRequest } from '../keys/gate.js';

export type CountedResult = Extract<MeterResult, { kind: 'ok' | 'exhausted' | 'burst' }>;

export interface MeterOptions {
  accounts: AccountStore;
  counting: CountingStore;
  /** Account announcements: a changed or deleted account leaves the cache. */
  coordination: CoordinationStore;
  plans: Config['plans'];
  zone: string;
  now: () => number;
  cache: Config['limits']['account_cache'];
  retentionMs: number;
  /** `keys.expiry_warning_days` in ms: answers to a key this close to its expiry say when it expires. */
  keyWarningMs: number;
  /** Attempts at keys this process cannot vouch for, per client address (the invalid-key throttle). */
  attempts?: KeyAttempts;
}
