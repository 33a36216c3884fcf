import { LRUCache } from 'lru-cache';
import type { Config } from '../config/schema.js';
import type { Store, StoredAccount } from '../store/types.js';
import { allowanceFor, type Allowance } from './allowance.js';
import { usageFragments, type UsageFragments } from './usage.js';

/** A cached account with everything a request needs that stays fixed until its period ends. */
export interface AccountEntry {
  account: StoredAccount;
  allowance: Allowance;
  usage: UsageFragments;
}

export type MeterResult =
  | { kind: 'ok'; entry: AccountEntry; used: number }
  | { kind: 'exhausted'; entry: AccountEntry; used: number }
  | { kind: 'inactive' }
  | { kind: 'unknown' };

export type CountedResult = Extract<MeterResult, { kind: 'ok' | 'exhausted' }>;

const UNKNOWN = Symbol('unknown key');
type Cached = AccountEntry | typeof UNKNOWN;

// An inactive copy is trusted only briefly: if a re-activation raced with loading it, the
// entry would otherwise refuse a good key until it fell out of the cache.
const INACTIVE_TTL_MS = 1000;
// Retries after the store says our copy changed; a second mismatch in a row means heavy churn.
const MAX_ATTEMPTS = 3;

export interface MeterOptions {
  store: Store;
  plans: Config['plans'];
  zone: string;
  now: () => number;
  cache: Config['limits']['account_cache'];
  retentionMs: number;
}

/**
 * Authenticates a key hash and counts one request against its account. Accounts are cached in
 * process by key hash, so a warm request costs one store round trip (`consume`). The store
 * checks the cached revision, so a stale copy can never admit what the store would refuse.
 */
export class Meter {
  private readonly cache: LRUCache<string, Cached>;
  private hits = 0;
  private misses = 0;

  constructor(private readonly opts: MeterOptions) {
    this.cache = new LRUCache<string, Cached>({ max: opts.cache.max_entries });
    opts.store.subscribe((event) => {
      if (event.type !== 'account') return;
      // '*': announcements may have been missed (the subscription was down), so trust nothing cached.
      if (event.id === '*') this.cache.clear();
      else for (const h of event.keyHashes) this.cache.delete(h);
    });
  }

  /** Counts one request when the account is active and within its allowance. */
  async consume(keyHash: string): Promise<MeterResult> {
    for (let attempt = 1; ; attempt++) {
      const entry = await this.entry(keyHash);
      if (entry === UNKNOWN) return { kind: 'unknown' };
      if (entry.account.status !== 'active') return { kind: 'inactive' };
      const { allowance, account } = entry;
      const result = await this.opts.store.consume({
        accountId: account.id,
        revision: account.revision,
        periodId: allowance.period.id,
        limit: allowance.limit,
        expireAtMs: allowance.period.endMs + this.opts.retentionMs,
      });
      if (result.kind !== 'changed') {
        return result.kind === 'inactive' ? result : { kind: result.kind, entry, used: result.used };
      }
      this.cache.delete(keyHash);
      if (attempt === MAX_ATTEMPTS) throw new Error(`account ${account.id} kept changing while being metered`);
    }
  }

  /** Authenticates and reports usage without counting (HEAD). */
  async peek(keyHash: string): Promise<MeterResult> {
    const entry = await this.entry(keyHash);
    if (entry === UNKNOWN) return { kind: 'unknown' };
    if (entry.account.status !== 'active') return { kind: 'inactive' };
    const used = await this.opts.store.usage(entry.account.id, entry.allowance.period.id);
    return { kind: used >= entry.allowance.limit ? 'exhausted' : 'ok', entry, used };
  }

  /** Share of lookups answered from the cache since start. */
  hitRatio(): number {
    const total = this.hits + this.misses;
    return total === 0 ? 0 : this.hits / total;
  }

  private async entry(keyHash: string): Promise<Cached> {
    const now = this.opts.now();
    const cached = this.cache.get(keyHash);
    if (cached !== undefined) {
      this.hits++;
      if (cached === UNKNOWN || now < cached.allowance.period.endMs) return cached;
      return this.remember(keyHash, cached.account, now);
    }
    this.misses++;
    const account = await this.opts.store.findByKeyHash(keyHash);
    if (!account) {
      const ttl = this.opts.cache.negative_ttl_ms;
      if (ttl > 0) this.cache.set(keyHash, UNKNOWN, { ttl });
      return UNKNOWN;
    }
    return this.remember(keyHash, account, now);
  }

  private remember(keyHash: string, account: StoredAccount, now: number): AccountEntry {
    const allowance = allowanceFor(account, this.opts.plans, this.opts.zone, now);
    const entry: AccountEntry = { account, allowance, usage: usageFragments(allowance) };
    this.cache.set(keyHash, entry, account.status === 'active' ? {} : { ttl: INACTIVE_TTL_MS });
    return entry;
  }
}
