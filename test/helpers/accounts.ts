import { randomBytes } from 'node:crypto';
import { KEY_SCOPES } from '../../src/store/keys/interface.js';
import type { ConsumeSpec, StoredAccount, StoredKey } from '../../src/store/store.js';

/** A stored key record with a fresh id and, unless given, a fresh key hash: the `default` key. */
export function storedKey(over: Partial<StoredKey> = {}): StoredKey {
  return {
    id: `key_${randomBytes(8).toString('hex')}`,
    name: 'default',
    created_at: '2026-11-01T00:00:00.000Z',
    expires_at: null,
    scopes: [...KEY_SCOPES],
    allowed_cidrs: [],
    last_used_on: null,
    hint: null,
    key_hash: randomBytes(32).toString('hex'),
    ...over,
  };
}

/** The hash of the account's first key. */
export const hashOf = (a: StoredAccount): string => (a.keys[0] as StoredKey).key_hash;

/** An active developer account with a fresh id and key hash, as a store holds it. */
export function storedAccount(over: Partial<StoredAccount> = {}): StoredAccount {
  return {
    id: `acct_${randomBytes(6).toString('hex')}`,
    status: 'active',
    plan: 'developer',
    limit: null,
    anchor: '2026-11-01T00:00:00+02:00',
    label: 'test',
    created_at: '2026-11-01T00:00:00.000Z',
    revision: 1,
    keys: [storedKey()],
    ...over,
  };
}

/** A consume of one request for `a` at its revision, in period `p` with a limit of 10. */
export function consumeSpec(a: StoredAccount, over: Partial<ConsumeSpec> = {}): ConsumeSpec {
  return { accountId: a.id, revision: a.revision, periodId: 'p', limit: 10, expireAtMs: Date.now() + 60_000, ...over };
}
