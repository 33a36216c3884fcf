import { z } from 'zod';
import { legacyKey } from './edit.js';
import { keyId, type StoredKey, storedKeySchema } from './key.js';

const storedKeys = z.array(storedKeySchema);

/**
 * An account's keys from their stored fields: `keys` (JSON) when written by this release, else
 * the single `key_hash` of an account written before accounts had several keys, as its
 * `default` key. `field` reads what is kept apart from the JSON (Redis: other fields of the
 * account hash): `lu:ID`, the day key ID last worked (written by the consume script, which does
 * not rewrite the JSON), and `rt:ID`, the key that rotation replaced it with.
 */
export function keysOf(
  keysJson: string | undefined,
  legacyHash: string | undefined,
  createdAt: string,
  field: (name: string) => string | undefined = () => undefined,
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
    const day = field(`lu:${k.id}`);
    if (day !== undefined && (k.last_used_on === null || day > k.last_used_on)) k.last_used_on = day;
    const successor = keyId.safeParse(field(`rt:${k.id}`));
    if (successor.success) k.rotated_to = successor.data;
  }
  return keys;
}
