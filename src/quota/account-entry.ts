import type { Config } from '../config/config-schema.js';
import { gateOf, type KeyGate, type KeyRefusal, type KeyRequest } from '../keys/gate.js';
import type { KnownKey } from '../keys/key-hashes.js';
import type { ConsumeSpec, StoredAccount, StoredKey } from '../store/store.js';
import { type Allowance, allowanceFor } from './allowance.js';
import { EntrySpec, LeanPeriod } from './entry-spec.js';
import { sharedThresholds } from './thresholds.js';
import { ratePolicy, type UsageFragments, usageFragments } from './usage.js';

/**
 * What an entry keeps of its account: what admission, the allowance and the answers read. Not
 * its keys, label, dates or external ids: a cached account is held once per key in use, by up to
 * `account_cache.max_entries` entries, so each field left out is left out that many times.
 */
export type EntryAccount = Pick<
  StoredAccount,
  'id' | 'status' | 'plan' | 'limit' | 'anchor' | 'revision' | 'burst' | 'overage' | 'grants' | 'status_reason'
>;

/** What an entry keeps of its key: what usage.php shows, and the day it last worked (its restrictions are the gate). */
export type EntryKey = Pick<StoredKey, 'id' | 'name' | 'expires_at' | 'last_used_on'>;

/**
 * A cached account, as one of its keys reaches it, with everything a request needs that stays
 * fixed until its period ends. Cached by key hash: each key of an account has its own entry.
 * Its `usage` object's fragments (UsageFragments) are fields of its own: no object per account.
 */
export interface AccountEntry extends UsageFragments {
  account: EntryAccount;
  /** The key the entry was found by: its own copy (its `last_used_on` is this process's view). */
  key: EntryKey;
  /** The key's expiry, scopes and allowlist, checked per request in process. */
  gate: KeyGate;
  allowance: Allowance;
  /** The `RateLimit-Policy` header value of the allowance. */
  ratePolicy: string;
  /** What a consume for this account asks the store, built once with the entry. */
  spec: ConsumeSpec;
  /** The account id JSON-encoded, as the access log writes it. */
  idJson: string;
  /** False once the cache has dropped or replaced the entry: a KnownKey holding it must look again. */
  live: boolean;
  /** The key's record holding it (Meter `hold`): given a `DroppedAccount` when the cache drops the entry for room. */
  holder: KnownKey<HeldAccount> | null;
}

/** What a key's record holds: its cached entry, or what is left of it once the cache dropped it for room. */
export type HeldAccount = AccountEntry | DroppedAccount;

/** What the access log, a trace and the expiry warning read of the account a request is answered for. */
export type AnsweredAccount = Pick<AccountEntry, 'idJson' | 'account' | 'gate'>;

/**
 * What a key's record keeps of an entry the cache dropped for room: what a consume from it needs
 * (Meter `dropped`), so a miss costs one round trip whose reply brings the whole account back.
 * The key hashes outlive the cache (http/listener-context.ts): the usage fragments, the rate
 * policy and the entry itself go, the spec's store note too (it is worked out again on the miss).
 * Still a true copy at its revision: the store counts from it only at that revision.
 */
export class DroppedAccount {
  readonly account: EntryAccount;
  readonly key: EntryKey;
  readonly gate: KeyGate;
  readonly spec: ConsumeSpec;
  readonly allowance: Allowance;

  constructor(e: AccountEntry) {
    this.account = e.account;
    this.key = e.key;
    this.gate = e.gate;
    this.spec = e.spec;
    this.allowance = e.allowance;
    e.spec.storeMemo = undefined;
  }

  /** Written for the access log only when the miss's store call fails; else it logs the entry the reply rebuilt. */
  get idJson(): string {
    return JSON.stringify(this.account.id);
  }
}

/** What an entry is worked out from besides the account and key (MeterOptions). */
export interface EntryOptions {
  plans: Config['plans'];
  zone: string;
  retentionMs: number;
  keyWarningMs: number;
}

/** The entry of `key` of `account` at `now`: built once per key and period (meter.ts caches it). */
export function accountEntry(account: StoredAccount, key: StoredKey, now: number, o: EntryOptions): AccountEntry {
  const { id, status, plan, limit, anchor, revision, burst, overage, grants, status_reason } = account;
  const kept: EntryAccount = { id, status, plan, limit, anchor, revision };
  if (burst !== undefined) kept.burst = burst;
  if (overage !== undefined) kept.overage = overage;
  if (grants !== undefined && grants.length > 0) kept.grants = grants;
  if (status_reason !== undefined) kept.status_reason = status_reason;
  const own: EntryKey = { id: key.id, name: key.name, expires_at: key.expires_at, last_used_on: key.last_used_on };
  return entryOf(kept, own, gateOf(key, o.keyWarningMs), now, o);
}

/** The entry again from what a key's record kept of it (`DroppedAccount`), in the period at `now`. */
export const keptEntry = (d: DroppedAccount, now: number, o: EntryOptions): AccountEntry =>
  entryOf(d.account, { ...d.key }, d.gate, now, o);

/** The entry of the same account and key in the period at `now`, once the cached one's has ended. */
export const renewedEntry = (e: AccountEntry, now: number, o: EntryOptions): AccountEntry =>
  entryOf(e.account, { ...e.key }, e.gate, now, o);

function entryOf(account: EntryAccount, key: EntryKey, gate: KeyGate, now: number, o: EntryOptions): AccountEntry {
  const allowance = allowanceFor(account, o.plans, o.zone, now);
  const { usageHead, usageMid, usageTail } = usageFragments(allowance);
  // The usage tail holds the period's dates: the entry's period writes them out only when read.
  allowance.period = new LeanPeriod(allowance.period, o.zone);
  const spec = new EntrySpec(account.id, account.revision, allowance, o.retentionMs);
  // Worked out once per account and period: the counts at which usage.threshold is raised.
  const percents = o.plans[allowance.plan]?.alert_thresholds ?? [];
  if (percents.length > 0) spec.alertAt(sharedThresholds(allowance.limit, percents));
  return {
    account,
    key,
    gate,
    allowance,
    usageHead,
    usageMid,
    usageTail,
    ratePolicy: ratePolicy(allowance),
    spec,
    idJson: JSON.stringify(account.id),
    live: true,
    holder: null,
  };
}

/** Why an account's entry may not make a request: the account's, or its key's (keys/gate.ts). */
export type Refusal = 'inactive' | 'unpaid' | KeyRefusal;

/**
 * Whether the entry may make `request`: the one place admission is decided, for the warm path
 * (http/metered/count.ts) and every Meter entry point. An account rule is a line here; the store
 * scripts re-check what they can against the stored revision, atomically. A key without
 * restrictions costs a request two reads.
 */
export function refusal(entry: Pick<AccountEntry, 'account' | 'gate'>, request: KeyRequest): Refusal | null {
  if (entry.account.status !== 'active') return entry.account.status_reason === 'unpaid' ? 'unpaid' : 'inactive';
  const { gate } = entry;
  return gate.open ? null : gate.refusal(request);
}
