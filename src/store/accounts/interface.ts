import type { BurstLimit, Overage } from '../../config/plan-config.js';
import type { PeriodMeta } from '../counting/interface.js';
import type { Account, AccountStatus, ExternalIds, Grant, StoredAccount } from './account-record.js';

export type {
  Account,
  AccountStatus,
  ExternalIds,
  Grant,
  StoredAccount,
} from './account-record.js';

/** What a grant writes on its period's record, which it opens when no request has yet. */
export interface GrantLedger {
  record: PeriodMeta;
  /** The period's limit before grants (the plan's or the account's), as its record keeps it. */
  limit: number;
  /** When the record may be forgotten: the period's end plus retention. */
  expireAtMs: number;
  /** Grants of periods that started before this (unix ms) are dropped from the account. */
  dropBeforeMs: number;
}

/** Keys change through the keys concern (store/keys/interface.ts), never through a patch. */
export type AccountPatch = Partial<Pick<Account, 'status' | 'plan' | 'limit' | 'anchor' | 'label'>> & {
  /** Replaces them; null (or none) removes them. */
  external_ids?: ExternalIds | null;
  /** Replaces it; null removes it (the plan's applies again). */
  burst?: BurstLimit | null;
  overage?: Overage | null;
  /** Null removes it. */
  status_reason?: 'unpaid' | null;
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
   * Removes the account and announces its key hashes, so its keys stop working everywhere. Its
   * usage history is not deleted: while it has period records, the account is kept as it was
   * for the exports (`listDeletedAccounts`) until the last of them expires.
   * Returns the account as it was; null when there is no such account.
   */
  deleteAccount(id: string): Promise<StoredAccount | null>;
  /**
   * Deleted accounts whose period records are still kept (their usage history outlives them
   * until retention), as they were when deleted, in id order after `after`: paged as
   * `listAccounts` (without a filter). Their keys find nothing.
   */
  listDeletedAccounts(after: string | null, limit: number): Promise<AccountPage>;
  /** A deleted account whose period records are still kept, as it was; null otherwise. */
  getDeletedAccount(id: string): Promise<StoredAccount | null>;
  /**
   * In one atomic step: adds the grant to the account, bumps the revision and announces the
   * change (so every instance reloads it and admits against the new limit on its next request),
   * and adds its requests to its period's record. Null when there is no such account.
   */
  addGrant(id: string, grant: Grant, ledger: GrantLedger): Promise<StoredAccount | null>;
}
