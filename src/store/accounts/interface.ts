import type { StoredKey } from '../keys/key.js';

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
  /** Who the account is in billing systems (docs/billing.md); absent when none is set. */
  external_ids?: ExternalIds;
}

/** The account's ids in billing systems: the Stripe customer it is billed as, the CloudEvents subject. */
export interface ExternalIds {
  stripe_customer?: string;
  billing_subject?: string;
}

/**
 * An account as the store keeps it: with its keys (1–20 live ones, store/keys/interface.ts),
 * each with the SHA-256 hash of the key, never the key.
 */
export interface StoredAccount extends Account {
  keys: StoredKey[];
}

/** Keys change through the keys concern (store/keys/interface.ts), never through a patch. */
export type AccountPatch = Partial<Pick<Account, 'status' | 'plan' | 'limit' | 'anchor' | 'label'>> & {
  /** Replaces them; null (or none) removes them. */
  external_ids?: ExternalIds | null;
};

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

/**
 * The accounts: created, found by key hash, changed, listed and deleted. Every change bumps the
 * revision and is announced (coordination's `subscribe`), so each instance drops its copy.
 * Proven for every backend by test/store/contract/accounts.ts.
 */
export interface AccountStore {
  /** The account one of whose keys (expired or not) has this hash. */
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
   * Removes the account and announces its key hashes, so its keys stop working everywhere.
   * Returns the account as it was; null when there is no such account.
   */
  deleteAccount(id: string): Promise<StoredAccount | null>;
}
