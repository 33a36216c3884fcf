/**
 * A key as it is stored, defined once (as prices/price-set-schema.ts defines a price set), apart
 * from the store's interface so the accounts can name it. The types, both stores' readers
 * (key-record.ts) and the admin input (keys/api-keys.ts) derive from it.
 */
import { z } from 'zod';

/** What a key may be used for; each public route needs one (docs/api.md "Key scopes"). */
export const KEY_SCOPES = ['prices', 'history', 'usage', 'passthrough'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** At most this many keys of an account are live (not expired) at once. */
export const MAX_LIVE_KEYS = 20;
/** At most this many address ranges in a key's allowlist. */
export const MAX_ALLOWED_CIDRS = 50;

export const keyId = z.string().regex(/^key_[0-9a-f]{16}$/);

/**
 * A key as the store keeps it: with the SHA-256 hash of the key, never the key. Checked on the
 * way in (the Redis hash's `keys` field, the memory store's file), so a damaged record fails
 * closed: it reads as no key at all.
 */
export const storedKeySchema = z.strictObject({
  /** `key_` + 16 hex. */
  id: keyId,
  /** 1–64 characters. */
  name: z.string().min(1).max(64),
  created_at: z.string(),
  /** ISO 8601; null: never. A key past it answers 401 "API key has expired." and is never counted. */
  expires_at: z.string().nullable(),
  /** What the key may be used for: a subset of KEY_SCOPES, all of them by default. */
  scopes: z.array(z.enum(KEY_SCOPES)),
  /** CIDRs (IPv4, IPv6) the key admits requests from; empty: any address. */
  allowed_cidrs: z.array(z.string()),
  /** The day (YYYY-MM-DD in the configured zone) the key last admitted a request; null: never. */
  last_used_on: z.string().nullable(),
  /** The key's last 4 characters; null for a key issued before keys had hints (shown by nothing else). */
  hint: z.string().nullable(),
  key_hash: z.string().regex(/^[0-9a-f]{64}$/),
  /**
   * The id of the key a rotation made to replace this one: a key rotates once, so a rotation
   * retried, or sent to several gateways at once, mints one successor. Kept apart from the
   * stored key's JSON on Redis (field `rt:ID` of the account hash), which the previous release
   * reads strictly.
   */
  rotated_to: keyId.optional(),
});

export type StoredKey = z.infer<typeof storedKeySchema>;

/** A key as operators and customers see it: never the key, never its hash. */
export type ApiKey = Omit<StoredKey, 'key_hash' | 'rotated_to'>;

/** What an operator may change on a key. */
export type KeyPatch = Partial<Pick<ApiKey, 'name' | 'expires_at' | 'scopes' | 'allowed_cidrs'>>;
