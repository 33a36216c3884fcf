import type { StoredAccount } from '../accounts/interface.js';

/** What a key may be used for; each public route needs one (docs/api.md "Key scopes"). */
export const KEY_SCOPES = ['prices', 'history', 'usage', 'passthrough'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** At most this many keys of an account are live (not expired) at once. */
export const MAX_LIVE_KEYS = 20;
/** At most this many address ranges in a key's allowlist. */
export const MAX_ALLOWED_CIDRS = 50;

/** A key as operators and customers see it: never the key, never its hash. */
export interface ApiKey {
  /** `key_` + 16 hex. */
  id: string;
  /** 1–64 characters. */
  name: string;
  created_at: string;
  /** ISO 8601; null: never. A key past it answers 401 "API key has expired." and is never counted. */
  expires_at: string | null;
  /** What the key may be used for: a subset of KEY_SCOPES, all of them by default. */
  scopes: KeyScope[];
  /** CIDRs (IPv4, IPv6) the key admits requests from; empty: any address. */
  allowed_cidrs: string[];
  /** The day (YYYY-MM-DD in the configured zone) the key last admitted a request; null: never. */
  last_used_on: string | null;
  /** The key's last 4 characters; null for a key issued before keys had hints (shown by nothing else). */
  hint: string | null;
}

/** A key as the store keeps it: with the SHA-256 hash of the key, never the key. */
export interface StoredKey extends ApiKey {
  key_hash: string;
}

/** What an operator may change on a key. */
export type KeyPatch = Partial<Pick<ApiKey, 'name' | 'expires_at' | 'scopes' | 'allowed_cidrs'>>;

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
