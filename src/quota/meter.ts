import { LRUCache } from 'lru-cache';
import type { Config } from '../config/config-schema.js';
import type { KnownKey } from '../keys/key-hashes.js';
import type {
  AccountStore,
  BurstState,
  ConsumeReceiver,
  ConsumeSpec,
  CoordinationStore,
  CountingStore,
  PeriodRecord,
  StoredAccount,
} from '../store/store.js';
import { DayClock } from '../time/days.js';
import { type Allowance, allowanceFor } from './allowance.js';
import { alertsFor } from './thresholds.js';
import { ratePolicy, type UsageFragments, usageFragments } from './usage.js';

/** A cached account with everything a request needs that stays fixed until its period ends. */
export interface AccountEntry {
  account: StoredAccount;
  allowance: Allowance;
  usage: UsageFragments;
  /** The `RateLimit-Policy` header value of the allowance. */
  ratePolicy: string;
  /** What a consume for this account asks the store, built once with the entry. */
  spec: ConsumeSpec;
  /** The account id JSON-encoded, as the access log writes it. */
  idJson: string;
  /** False once the cache has dropped or replaced the entry: a KnownKey holding it must look again. */
  live: boolean;
}

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
  | { kind: 'unknown' };

export type CountedResult = Extract<MeterResult, { kind: 'ok' | 'exhausted' | 'burst' }>;

// An inactive copy is trusted only briefly: if a re-activation raced with loading it, the
// entry would otherwise refuse a good key until it fell out of the cache.
const INACTIVE_TTL_MS = 1000;
// Unknown keys get their own, smaller cache so a flood of made-up keys cannot evict real accounts.
const MAX_UNKNOWN = 10_000;
// Retries after the store says our copy changed; a second mismatch in a row means heavy churn.
const MAX_ATTEMPTS = 3;

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
}

/**
 * Authenticates a key hash and counts one request against its account. Accounts are cached in
 * process by key hash, so a warm request costs one store round trip (`consume`). The store
 * checks the cached revision, so a stale copy can never admit what the store would refuse.
 */
export class Meter {
  private readonly accounts: LRUCache<string, AccountEntry>;
  private readonly unknown: LRUCache<string, true>;
  /** Lookups in flight, so a burst of requests for one uncached key costs one store read. */
  private readonly loading = new Map<string, Promise<AccountEntry | null>>();
  /** Bumped by every account announcement: a lookup that raced with one is not cached as unknown. */
  private generation = 0;
  private hits = 0;
  private misses = 0;
  private readonly days: DayClock;

  constructor(private readonly opts: MeterOptions) {
    this.days = new DayClock(opts.zone);
    this.accounts = new LRUCache({
      max: opts.cache.max_entries,
      dispose: (entry) => {
        entry.live = false;
      },
    });
    this.unknown = new LRUCache({ max: MAX_UNKNOWN, ttl: Math.max(1, opts.cache.negative_ttl_ms) });
    opts.coordination.subscribe((event) => {
      if (event.type !== 'account') return;
      this.generation++;
      // '*': announcements may have been missed (the subscription was down), so trust nothing cached.
      // Lookups in flight may have read the account before this change: later requests must not join them.
      if (event.id === '*') {
        this.accounts.clear();
        this.unknown.clear();
        this.loading.clear();
      } else {
        for (const h of event.keyHashes) {
          this.accounts.delete(h);
          this.unknown.delete(h);
          this.loading.delete(h);
        }
      }
    });
  }

  /** Counts one request when the account is active and within its allowance. */
  async consume(keyHash: string): Promise<MeterResult> {
    for (let attempt = 1; ; attempt++) {
      const entry = await this.entry(keyHash);
      if (entry === null) return { kind: 'unknown' };
      if (entry.account.status !== 'active') return { kind: 'inactive' };
      const day = this.today();
      const result = await this.opts.counting.consume(entry.spec, day);
      if (result.kind !== 'changed') {
        return result.kind === 'inactive' ? result : { ...result, entry, day };
      }
      this.accounts.delete(keyHash);
      if (attempt === MAX_ATTEMPTS) throw new Error(`account ${entry.account.id} kept changing while being metered`);
    }
  }

  /** Takes back a request counted by `consume` whose answer failed (a pass-through the origin failed). */
  refund(entry: AccountEntry, day: string): Promise<void> {
    return this.opts.counting.refund(entry.account.id, entry.allowance.period.id, day);
  }

  /** The ledger's day now (YYYY-MM-DD in the configured zone). */
  today(): string {
    return this.days.at(this.opts.now());
  }

  /** The account's periods overlapping [fromMs, toMs), with their days (the usage history). */
  async periods(entry: AccountEntry, fromMs: number, toMs: number): Promise<PeriodRecord[]> {
    return (await this.opts.counting.periodRecords([entry.account.id], fromMs, toMs))[0] ?? [];
  }

  /**
   * The cached entry of a key while it holds for the current period, or undefined when the store
   * must be asked (`consume` then). With `consumeInto`, the warm path of a request. An active
   * entry rides on the key's record, so a warm request skips the cache lookup (and so does not
   * refresh the entry's recency: with `max_entries` below the accounts in use, a busy account
   * may be reloaded once when evicted). Inactive entries expire after INACTIVE_TTL_MS, which only
   * the cache sees, so they are always looked up.
   */
  warm(key: KnownKey<AccountEntry>): AccountEntry | undefined {
    let entry = key.cached;
    if (entry === null || !entry.live) {
      const found = this.accounts.get(key.hash);
      if (found === undefined) return undefined;
      key.cached = found.account.status === 'active' ? found : null;
      entry = found;
    }
    if (this.opts.now() >= entry.allowance.period.endMs) return undefined;
    this.hits++;
    return entry;
  }

  /**
   * Counts one request for a warm entry, without a promise. On `changed` the caller calls
   * `forget` and goes the `consume` way, which reloads the account. Returns the ledger's day
   * it is counted on, for a refund.
   */
  consumeInto(entry: AccountEntry, receiver: ConsumeReceiver): string {
    const day = this.today();
    this.opts.counting.consumeInto(entry.spec, day, receiver);
    return day;
  }

  forget(keyHash: string): void {
    this.accounts.delete(keyHash);
  }

  /** Authenticates and reports usage without counting (HEAD). */
  async peek(keyHash: string): Promise<MeterResult> {
    const entry = await this.entry(keyHash);
    if (entry === null) return { kind: 'unknown' };
    if (entry.account.status !== 'active') return { kind: 'inactive' };
    const used = await this.opts.counting.usage(entry.account.id, entry.allowance.period.id);
    return { kind: used >= entry.allowance.cap ? 'exhausted' : 'ok', entry, used, day: this.today() };
  }

  /** Who the key belongs to, without reading usage: for requests refused before counting. */
  async identify(keyHash: string): Promise<'unknown' | 'inactive' | 'active'> {
    const entry = await this.entry(keyHash);
    return entry === null ? 'unknown' : entry.account.status === 'active' ? 'active' : 'inactive';
  }

  /** Whether this process holds the key as an active account, without asking the store. */
  knowsActive(keyHash: string): boolean {
    return this.accounts.get(keyHash)?.account.status === 'active';
  }

  /** Share of lookups answered from the cache since start. */
  hitRatio(): number {
    const total = this.hits + this.misses;
    return total === 0 ? 0 : this.hits / total;
  }

  private async entry(keyHash: string): Promise<AccountEntry | null> {
    const now = this.opts.now();
    const cached = this.accounts.get(keyHash);
    if (cached !== undefined) {
      this.hits++;
      return now < cached.allowance.period.endMs ? cached : this.remember(keyHash, cached.account, now);
    }
    if (this.unknown.has(keyHash)) {
      this.hits++;
      return null;
    }
    this.misses++;
    let pending = this.loading.get(keyHash);
    if (!pending) {
      const started: Promise<AccountEntry | null> = this.load(keyHash).finally(() => {
        if (this.loading.get(keyHash) === started) this.loading.delete(keyHash);
      });
      pending = started;
      this.loading.set(keyHash, pending);
    }
    return pending;
  }

  /**
   * Reads the account of a key hash. When an announcement arrived meanwhile, the answer may
   * predate it: it serves this request (the store still checks the revision when counting) but
   * is not cached.
   */
  private async load(keyHash: string): Promise<AccountEntry | null> {
    const generation = this.generation;
    const account = await this.opts.accounts.findByKeyHash(keyHash);
    const current = generation === this.generation;
    if (account) return this.remember(keyHash, account, this.opts.now(), current);
    if (current && this.opts.cache.negative_ttl_ms > 0) this.unknown.set(keyHash, true);
    return null;
  }

  private remember(keyHash: string, account: StoredAccount, now: number, cache = true): AccountEntry {
    const allowance = allowanceFor(account, this.opts.plans, this.opts.zone, now);
    const spec: ConsumeSpec = {
      accountId: account.id,
      revision: account.revision,
      periodId: allowance.period.id,
      limit: allowance.limit,
      cap: allowance.cap,
      expireAtMs: allowance.period.endMs + this.opts.retentionMs,
      record: {
        plan: allowance.plan,
        kind: allowance.period.kind,
        startMs: allowance.period.startMs,
        endMs: allowance.period.endMs,
      },
    };
    if (allowance.burst !== null)
      spec.burst = { limit: allowance.burst.limit, windowMs: allowance.burst.window_s * 1000 };
    // Worked out once per account and period: the counts at which usage.threshold is raised.
    const percents = this.opts.plans[allowance.plan]?.alert_thresholds ?? [];
    if (percents.length > 0) {
      const { period } = allowance;
      const context = { plan: allowance.plan, period_started_at: period.startedAt, period_ends_at: period.endsAt };
      spec.alerts = alertsFor(allowance.limit, percents, context);
    }
    const entry: AccountEntry = {
      account,
      allowance,
      usage: usageFragments(allowance),
      ratePolicy: ratePolicy(allowance),
      spec,
      idJson: JSON.stringify(account.id),
      live: true,
    };
    if (cache) this.accounts.set(keyHash, entry, account.status === 'active' ? {} : { ttl: INACTIVE_TTL_MS });
    return entry;
  }
}
