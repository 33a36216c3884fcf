/** A key as it is stored, apart from the store's interface so the accounts can name it. */

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
  /**
   * The id of the key a rotation made to replace this one: a key rotates once, so a rotation
   * retried, or sent to several gateways at once, mints one successor. Kept apart from the
   * stored key's JSON on Redis (field `rt:ID` of the account hash), which the previous release
   * reads strictly.
   */
  rotated_to?: string;
}

/** What an operator may change on a key. */
export type KeyPatch = Partial<Pick<ApiKey, 'name' | 'expires_at' | 'scopes' | 'allowed_cidrs'>>;
