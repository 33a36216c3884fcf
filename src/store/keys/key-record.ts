import { z } from 'zod';
import { legacyKey } from './edit.js';
import { KEY_SCOPES, type StoredKey } from './interface.js';

/**
 * A stored key as both stores read it back (the Redis hash's `keys` field, the memory store's
 * file). Checked on the way in, so a damaged record fails closed: it reads as no key at all.
 */
export const storedKeySchema = z.strictObject({
  id: z.string().regex(/^key_[0-9a-f]{16}$/),
  name: z.string().min(1).max(64),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  scopes: z.array(z.enum(KEY_SCOPES)),
  allowed_cidrs: z.array(z.string()),
  last_used_on: z.string().nullable(),
  hint: z.string().nullable(),
  key_hash: z.string().regex(/^[0-9a-f]{64}$/),
});

const storedKeys = z.array(storedKeySchema);

/**
 * An account's keys from their stored fields: `keys` (JSON) when written by this release, else
 * the single `key_hash` of an account written before accounts had several keys, as its
 * `default` key. `lastUsed` holds the days keys last worked, by key id, when kept apart from
 * the record (Redis: fields written by the consume script, which does not rewrite the JSON).
 */
export function keysOf(
  keysJson: string | undefined,
  legacyHash: string | undefined,
  createdAt: string,
  lastUsed: (id: string) => string | undefined = () => undefined,
): StoredKey[] {
  let keys: StoredKey[] = [];
  if (keysJson !== undefined) {
    try {
      const parsed = storedKeys.safeParse(JSON.parse(keysJson));
      if (parsed.success) keys = parsed.data;
    } catch {
      keys = [];
    }
  } else if (legacyHash !== undefined && /^[0-9a-f]{64}$/.test(legacyHash)) {
    keys = [legacyKey(legacyHash, createdAt)];
  }
  for (const k of keys) {
    const day = lastUsed(k.id);
    if (day !== undefined && (k.last_used_on === null || day > k.last_used_on)) k.last_used_on = day;
  }
  return keys;
}
