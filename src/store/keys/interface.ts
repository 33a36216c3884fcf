import type { StoredAccount } from '../accounts/interface.js';
import type { KeyPatch, StoredKey } from './key.js';

export type { ApiKey, KeyPatch, KeyScope, StoredKey } from './key.js';
export { KEY_SCOPES, MAX_ALLOWED_CIDRS, MAX_LIVE_KEYS } from './key.js';

/** An account and the one of its keys a hash names. */
export interface AccountKey {
  account: StoredAccount;
  key: StoredKey;
}

/**
 * What a change did, for the caller's audit line and events: the account after it (revision
 * bumped, every key), the key created, changed or removed (as it is now, or was when removed),
 * and `previous`: for a rotation the old key with its new `expires_at`, for an update the key as
 * it was before.
 */
export interface KeyChange {
  account: StoredAccount;
  key: StoredKey;
  previous?: StoredKey;
}

/**
 * The keys of an account. They live with the account (StoredAccount.keys), so a key change is an
 * account change: it bumps the account's revision (a consume made from a cached copy from before
 * it answers `changed`) and announces every key hash of the account, old and new, as
 * `deleteAccount` does, so every instance drops its cached copies within a second.
 *
 * Unknown account or key: GatewayError NOT_FOUND. Too many live keys, or removing the last key:
 * GatewayError CONFLICT. Proven for every backend by test/store/contract/keys.ts.
 */
export interface KeyStore {
  /** The account and key of a key hash, expired or not; null when no key has that hash. */
  findByKeyHash(keyHash: string): Promise<AccountKey | null>;
  /** The account's keys, oldest first; null when there is no such account. */
  listKeys(accountId: string): Promise<StoredKey[] | null>;
  /** Adds a key (its id and hash new, `last_used_on` null). */
  addKey(accountId: string, key: StoredKey): Promise<KeyChange>;
  /** Applies the patch to one key. */
  updateKey(accountId: string, keyId: string, patch: KeyPatch): Promise<KeyChange>;
  /**
   * Adds `next` (its name, scopes and allowlist copied from the old key by the store) and sets
   * the old key's `expires_at` to `oldExpiresAt`, in one change. `key` is the new key, `previous`
   * the old one.
   */
  rotateKey(accountId: string, keyId: string, next: StoredKey, oldExpiresAt: string): Promise<KeyChange>;
  /** Removes the key: it stops working everywhere within a second. Refuses the account's last key. */
  revoke(accountId: string, keyId: string): Promise<KeyChange>;
  /**
   * Sets `last_used_on` without bumping the revision or announcing: the day a key last worked is
   * no reason to reload it. The metered path does this inside its consume instead (one write
   * per key per day); this is for callers outside it.
   */
  markUsed(accountId: string, keyId: string, day: string): Promise<void>;
  /** Forgets the account's keys that expired before `beforeMs` (never its last key). Returns those forgotten. */
  forgetExpired(accountId: string, beforeMs: number): Promise<StoredKey[]>;
}
