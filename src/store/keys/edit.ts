import { createHash } from 'node:crypto';
import { GatewayError } from '../../failures.js';
import { KEY_SCOPES, type KeyPatch, MAX_LIVE_KEYS, type StoredKey } from './interface.js';

/**
 * The key changes as pure functions of an account's keys, shared by both stores so they agree by
 * construction: each store reads the keys, applies one of these, and writes the result in one
 * atomic step (memory: synchronously; Redis: a script that checks the revision it read).
 */

/** What an edit makes of the keys, and what it reports (interface.ts KeyChange without the account). */
export interface Edited {
  keys: StoredKey[];
  key: StoredKey;
  previous?: StoredKey;
}

// Expired keys kept for the audit past which the oldest are forgotten at the next change: the
// live keys are bounded by MAX_LIVE_KEYS, this bounds a record rotated many times a day.
const MAX_KEPT_EXPIRED = 20;

/** Whether the key has expired at `now`. */
export function expired(key: StoredKey, now: number): boolean {
  return key.expires_at !== null && Date.parse(key.expires_at) <= now;
}

/**
 * The one key of an account written before accounts had several: its `default` key. Its id is
 * derived from its hash, so every gateway and every read names it alike until a change writes
 * it down; its hint is unknown (only the hash was kept).
 */
export function legacyKey(keyHash: string, createdAt: string): StoredKey {
  const id = `key_${createHash('sha256').update(`fpg key id\0${keyHash}`).digest('hex').slice(0, 16)}`;
  return {
    id,
    name: 'default',
    created_at: createdAt,
    expires_at: null,
    scopes: [...KEY_SCOPES],
    allowed_cidrs: [],
    last_used_on: null,
    hint: null,
    key_hash: keyHash,
  };
}

/**
 * What the account hash's `key_hash` names, the one field the previous release reads (a rolling
 * upgrade, a rollback): the first key it can serve as this release would, one without expiry,
 * scopes or allowlist, since it checks none of them; '' (no key) when there is none.
 */
export function previousReleaseHash(keys: readonly StoredKey[]): string {
  const open = keys.find(
    (k) => k.expires_at === null && k.allowed_cidrs.length === 0 && KEY_SCOPES.every((s) => k.scopes.includes(s)),
  );
  return open?.key_hash ?? '';
}

export const copyKey = (k: StoredKey): StoredKey => ({
  ...k,
  scopes: [...k.scopes],
  allowed_cidrs: [...k.allowed_cidrs],
});

function find(keys: StoredKey[], accountId: string, keyId: string): StoredKey {
  const key = keys.find((k) => k.id === keyId);
  if (!key) throw new GatewayError('NOT_FOUND', `no key with id ${keyId} on account ${accountId}`);
  return key;
}

function checkRoom(keys: StoredKey[], accountId: string, now: number): void {
  if (keys.filter((k) => !expired(k, now)).length >= MAX_LIVE_KEYS)
    throw new GatewayError('CONFLICT', `account ${accountId} already has ${MAX_LIVE_KEYS} keys that have not expired`);
}

/** Drops the oldest expired keys past MAX_KEPT_EXPIRED. */
function bounded(keys: StoredKey[], now: number): StoredKey[] {
  const old = keys.filter((k) => expired(k, now));
  if (old.length <= MAX_KEPT_EXPIRED) return keys;
  const drop = new Set(
    old
      .sort((a, b) => Date.parse(a.expires_at as string) - Date.parse(b.expires_at as string))
      .slice(0, old.length - MAX_KEPT_EXPIRED),
  );
  return keys.filter((k) => !drop.has(k));
}

export function addKey(keys: StoredKey[], accountId: string, key: StoredKey, now: number): Edited {
  if (keys.some((k) => k.id === key.id || k.key_hash === key.key_hash))
    throw new GatewayError('CONFLICT', `key ${key.id} or its hash already exists`);
  checkRoom(keys, accountId, now);
  const added = copyKey(key);
  return { keys: bounded([...keys, added], now), key: added };
}

export function updateKey(keys: StoredKey[], accountId: string, keyId: string, patch: KeyPatch): Edited {
  const before = find(keys, accountId, keyId);
  const after: StoredKey = { ...copyKey(before) };
  if (patch.name !== undefined) after.name = patch.name;
  if (patch.expires_at !== undefined) after.expires_at = patch.expires_at;
  if (patch.scopes !== undefined) after.scopes = [...patch.scopes];
  if (patch.allowed_cidrs !== undefined) after.allowed_cidrs = [...patch.allowed_cidrs];
  return { keys: keys.map((k) => (k === before ? after : k)), key: after, previous: copyKey(before) };
}

export function rotateKey(
  keys: StoredKey[],
  accountId: string,
  keyId: string,
  next: StoredKey,
  oldExpiresAt: string,
  now: number,
): Edited {
  const old = find(keys, accountId, keyId);
  if (old.rotated_to !== undefined) throw alreadyRotated(accountId, old, keys);
  if (keys.some((k) => k.id === next.id || k.key_hash === next.key_hash))
    throw new GatewayError('CONFLICT', `key ${next.id} or its hash already exists`);
  // The old key stops counting as live with the rotation when its grace is 0.
  checkRoom(
    keys.filter((k) => k !== old || Date.parse(oldExpiresAt) > now),
    accountId,
    now,
  );
  const kept = old.expires_at !== null && Date.parse(old.expires_at) < Date.parse(oldExpiresAt);
  // A grace never lengthens a key's life: one that expires sooner keeps its expiry.
  const previous: StoredKey = {
    ...copyKey(old),
    expires_at: kept ? old.expires_at : oldExpiresAt,
    rotated_to: next.id,
  };
  const added: StoredKey = {
    ...copyKey(next),
    name: old.name,
    scopes: [...old.scopes],
    allowed_cidrs: [...old.allowed_cidrs],
  };
  return { keys: bounded([...keys.map((k) => (k === old ? previous : k)), added], now), key: added, previous };
}

/**
 * The answer to a second rotation of a key: the successor's id (never its secret), in the
 * message and as `successor_key_id`, so a caller that retried a rotation whose answer it lost
 * knows which key to rotate (or revoke) rather than minting another.
 */
export function alreadyRotated(accountId: string, old: StoredKey, keys: readonly StoredKey[]): GatewayError {
  const successor = old.rotated_to as string;
  const gone = keys.some((k) => k.id === successor) ? '' : ' (since removed)';
  return new GatewayError(
    'CONFLICT',
    `key ${old.id} of account ${accountId} was already rotated: its successor is ${successor}${gone}; rotate that key instead`,
    [],
    { successor_key_id: successor },
  );
}

export function revokeKey(keys: StoredKey[], accountId: string, keyId: string, now: number): Edited {
  const key = find(keys, accountId, keyId);
  // Expired keys kept for the audit do not count: the account must keep one that works.
  if (keys.length === 1 || (!expired(key, now) && !keys.some((k) => k !== key && !expired(k, now))))
    throw new GatewayError(
      'CONFLICT',
      `key ${keyId} is the last key of account ${accountId}; delete the account instead`,
    );
  return { keys: keys.filter((k) => k !== key), key: copyKey(key) };
}

/** The keys without those expired before `beforeMs`, but never none. */
export function forgetExpired(keys: StoredKey[], beforeMs: number): { keys: StoredKey[]; forgotten: StoredKey[] } {
  const forgotten = keys.filter((k) => k.expires_at !== null && Date.parse(k.expires_at) < beforeMs);
  if (forgotten.length === keys.length) forgotten.pop();
  return { keys: keys.filter((k) => !forgotten.includes(k)), forgotten };
}
