import { LRUCache } from 'lru-cache';
import { attempted } from '../keys/attempts.js';
import { ANY_SCOPE, type KeyRequest } from '../keys/gate.js';
import type { KnownKey } from '../keys/key-hashes.js';
import type { ConsumeReceiver, PeriodRecord, StoredAccount } from '../store/store.js';
import { DayClock } from '../time/days.js';
import {
  type AccountEntry,
  accountEntry,
  DroppedAccount,
  type HeldAccount,
  keptEntry,
  type Refusal,
  refusal,
  renewedEntry,
} from './account-entry.js';
import { entryCache, forgetAnnounced } from './entry-cache.js';
import type { MeterOptions, MeterResult } from './meter-types.js';

export type { AccountEntry, AnsweredAccount, HeldAccount } from './account-entry.js';
export { DroppedAccount } from './account-entry.js';

export type { CountedResult, KeyRequest, MeterOptions, MeterResult } from './meter-types.js';

// An inactive copy is trusted only briefly: if a re-activation raced with loading it, the
// entry would otherwise refuse a good key until it fell out of the cache.
const INACTIVE_TTL_MS = 1000;
// Unknown keys get their own, smaller cache so a flood of made-up keys cannot evict real accounts.
const MAX_UNKNOWN = 10_000;
// Retries after the store says our copy changed; a second mismatch in a row means heavy churn.
const MAX_ATTEMPTS = 3;

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
  /** Entries evicted since start to make room for others (max_entries); not those changed or expired. */
  evictions = 0;
  private readonly days: DayClock;
  /** The question about a key alone: is its account active and the key in force (any scope, any address)? */
  private readonly keyAlone: KeyRequest;

  constructor(private readonly opts: MeterOptions) {
    this.days = new DayClock(opts.zone);
    this.keyAlone = { scope: ANY_SCOPE, now: opts.now, address: () => null };
    this.accounts = entryCache(opts.cache.max_entries, () => this.evictions++);
    this.unknown = new LRUCache({ max: MAX_UNKNOWN, ttl: Math.max(1, opts.cache.negative_ttl_ms) });
    opts.coordination.subscribe((event) => {
      if (event.type !== 'account') return;
      this.generation++;
      forgetAnnounced(event.id === '*' ? '*' : event.keyHashes, [this.accounts, this.unknown, this.loading]);
    });
  }

  /**
   * Counts one request when the account is active and within its allowance. With `address` (the
   * client's), a key this process does not hold is an attempt of that address at a key
   * (`KeyAttempts`) before it is looked up.
   */
  async consume(keyHash: string, request: KeyRequest = this.keyAlone, address?: string): Promise<MeterResult> {
    for (let attempt = 1; ; attempt++) {
      const entry = await this.entry(keyHash, attempt === 1 ? address : undefined);
      if (entry === 'throttled') return { kind: 'throttled' };
      if (entry === null) return { kind: 'unknown' };
      const reason = refusal(entry, request);
      if (reason !== null) return reason === 'inactive' ? { kind: 'inactive' } : { kind: 'refused', reason, entry };
      const day = this.today();
      this.touch(entry, day);
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
  warm(key: KnownKey<HeldAccount>): AccountEntry | undefined {
    const held = key.cached;
    let entry = held instanceof DroppedAccount || !held?.live ? undefined : held;
    if (entry === undefined) {
      entry = this.accounts.get(key.hash);
      if (entry === undefined) return undefined;
      key.cached = null;
      this.hold(key, entry);
    }
    if (this.opts.now() >= entry.allowance.period.endMs) return undefined;
    this.hits++;
    return entry;
  }

  /**
   * Counts one request for a warm entry, without a promise. On `changed` the caller calls
   * `forget` and goes the `consume` way, which reloads the account. Returns the ledger's day
   * it is counted on, for a refund (a caller that needs it before the reply passes it in).
   */
  consumeInto(entry: Pick<AccountEntry, 'key' | 'spec'>, receiver: ConsumeReceiver, day = this.today()): string {
    if (entry.key.last_used_on !== day) this.touch(entry, day);
    this.opts.counting.consumeInto(entry.spec, day, receiver);
    return day;
  }

  /**
   * What a key's record keeps of the entry the cache dropped for room, while its period holds: a
   * miss counts from it instead of loading the account first. Judged as a warm entry is; a refusal
   * it gives is not trusted (it may be out of date): the caller takes the slow path.
   */
  dropped(key: KnownKey<HeldAccount>): DroppedAccount | undefined {
    const held = key.cached;
    return held instanceof DroppedAccount && this.opts.now() < held.allowance.period.endMs ? held : undefined;
  }

  /**
   * A miss is about to count from a `dropped` copy: the store counts only at the copy's revision
   * (as exact as a warm count) and its reply carries the account (spec `load`, then `revived`):
   * one round trip. Returns the announcements so far, for `revived`.
   */
  reviving(held: DroppedAccount): number {
    this.misses++;
    held.spec.load = true;
    return this.generation;
  }

  /**
   * The entry of `known` in the period `held` was counted in, from the account the reply to a
   * `reviving` count carried, or without it from `held` (a request of the same spec in the call
   * took the spec's `load`): both are at the revision counted. Cached unless an announcement came.
   */
  revived(known: KnownKey<HeldAccount>, held: DroppedAccount, account: StoredAccount | undefined, generation: number) {
    const key = account?.keys.find((k) => k.key_hash === known.hash);
    const at = Math.min(this.opts.now(), held.allowance.period.endMs - 1);
    const entry = account && key ? accountEntry(account, key, at, this.opts) : keptEntry(held, at, this.opts);
    if (generation === this.generation) this.hold(known, this.keep(known.hash, entry));
    return entry;
  }

  /**
   * Puts the entry the cache holds for a key on its record, as a warm request does: a key whose
   * every request misses (more accounts in use than the cache holds) then finds it `dropped`.
   */
  hold(known: KnownKey<HeldAccount>, entry: AccountEntry): void {
    if (entry.account.status !== 'active' || this.accounts.peek(known.hash) !== entry) return;
    known.cached = entry;
    entry.holder = known;
  }

  /**
   * The first consume of a key on a day notes the day in the store (ConsumeSpec.touch, in the
   * same round trip): from then on this process's copy says it, so the key costs no more writes
   * that day. A copy reloaded from the store (another gateway noted it) asks no write either.
   */
  private touch(entry: Pick<AccountEntry, 'key' | 'spec'>, day: string): void {
    if (entry.key.last_used_on === day) return;
    entry.key.last_used_on = day;
    entry.spec.touch = entry.key.id;
  }

  /** The store found the copy of `keyHash` out of date: it leaves the cache, and no miss counts from what `known` keeps of it. */
  forget(keyHash: string, known?: KnownKey<HeldAccount> | null): void {
    this.accounts.delete(keyHash);
    if (known && known.cached instanceof DroppedAccount) known.cached = null;
  }

  /** Authenticates and reports usage without counting (HEAD); `address` as for `consume`. */
  async peek(keyHash: string, request: KeyRequest = this.keyAlone, address?: string): Promise<MeterResult> {
    const entry = await this.entry(keyHash, address);
    if (entry === 'throttled') return { kind: 'throttled' };
    if (entry === null) return { kind: 'unknown' };
    const reason = refusal(entry, request);
    if (reason !== null) return reason === 'inactive' ? { kind: 'inactive' } : { kind: 'refused', reason, entry };
    const used = await this.opts.counting.usage(entry.account.id, entry.allowance.period.id);
    return { kind: used >= entry.allowance.cap ? 'exhausted' : 'ok', entry, used, day: this.today() };
  }

  /** Who the key belongs to, without reading usage: for requests refused before counting; `address` as for `consume`. */
  async identify(
    keyHash: string,
    request: KeyRequest = this.keyAlone,
    address?: string,
  ): Promise<'unknown' | 'active' | 'throttled' | Refusal> {
    const entry = await this.entry(keyHash, address);
    if (entry === 'throttled' || entry === null) return entry ?? 'unknown';
    return refusal(entry, request) ?? 'active';
  }

  /** The entry this process holds for a key, without asking the store. */
  cached(keyHash: string): AccountEntry | undefined {
    return this.accounts.get(keyHash);
  }

  /**
   * Whether this process holds the key as one `refusal` admits for `request` (by default: an
   * active account's unexpired key), without asking the store.
   */
  knowsActive(keyHash: string, request: KeyRequest = this.keyAlone): boolean {
    const entry = this.accounts.get(keyHash);
    return entry !== undefined && refusal(entry, request) === null;
  }

  /** Share of lookups answered from the cache since start. */
  hitRatio(): number {
    const total = this.hits + this.misses;
    return total === 0 ? 0 : this.hits / total;
  }

  /**
   * The key's entry, from the cache or the store. A key not cached from an `address` is an attempt
   * of that address: it waits for its ticket, and its outcome (unknown or not) is told.
   */
  private entry(keyHash: string, address?: string): Promise<AccountEntry | null | 'throttled'> {
    const { attempts } = this.opts;
    if (address === undefined || attempts === undefined || this.accounts.has(keyHash)) return this.find(keyHash);
    return attempted(attempts, address, () => this.find(keyHash));
  }

  private async find(keyHash: string): Promise<AccountEntry | null> {
    const now = this.opts.now();
    const cached = this.accounts.get(keyHash);
    if (cached !== undefined) {
      this.hits++;
      return now < cached.allowance.period.endMs ? cached : this.keep(keyHash, renewedEntry(cached, now, this.opts));
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
    // The account carries every key; the entry is the one of this hash (findByKeyHash found it there).
    const key = account?.keys.find((k) => k.key_hash === keyHash);
    if (account && key) {
      const entry = accountEntry(account, key, this.opts.now(), this.opts);
      return current ? this.keep(keyHash, entry) : entry;
    }
    if (current && this.opts.cache.negative_ttl_ms > 0) this.unknown.set(keyHash, true);
    return null;
  }

  private keep(keyHash: string, entry: AccountEntry): AccountEntry {
    this.accounts.set(keyHash, entry, entry.account.status === 'active' ? {} : { ttl: INACTIVE_TTL_MS });
    return entry;
  }
}
