import { randomBytes } from 'node:crypto';
import type { ConsumeSpec, StoredAccount } from '../../src/store/store.js';

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
    key_hash: randomBytes(32).toString('hex'),
    ...over,
  };
}

/** A consume of one request for `a` at its revision, in period `p` with a limit of 10. */
export function consumeSpec(a: StoredAccount, over: Partial<ConsumeSpec> = {}): ConsumeSpec {
  return { accountId: a.id, revision: a.revision, periodId: 'p', limit: 10, expireAtMs: Date.now() + 60_000, ...over };
}
