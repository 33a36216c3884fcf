import type { Test } from 'tap';
import type { Store, StoredAccount } from '../../../src/store/store.js';
import { waitFor } from '../../helpers/wait.js';
import { account, DAY, spec } from './fixtures.js';

/**
 * The counting contract (store/counting/interface.ts): every backend runs it unchanged. `make`
 * returns a fresh, empty store; each test gets its own. Accounts are set up and changed through
 * the accounts concern, since a consume is checked against its account.
 */
export function countingContract(t: Test, make: () => Promise<Store>): void {
  t.test('consume counts successes up to the limit and never past it', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await store.counting.consume(spec(a), DAY));
    t.same(results, [
      { kind: 'ok', used: 1 },
      { kind: 'ok', used: 2 },
      { kind: 'ok', used: 3 },
      { kind: 'exhausted', used: 3 },
      { kind: 'exhausted', used: 3 },
    ]);
    t.equal(await store.counting.usage(a.id, '1000'), 3, 'rejected requests are not counted');
  });

  t.test('concurrent consumes admit exactly the limit with distinct counts', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const results = await Promise.all(
      Array.from({ length: 60 }, () => store.counting.consume(spec(a, { limit: 20 }), DAY)),
    );
    const ok = results.filter((r) => r.kind === 'ok').map((r) => (r.kind === 'ok' ? r.used : 0));
    t.equal(ok.length, 20);
    t.same(
      [...ok].sort((x, y) => x - y),
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    t.equal(await store.counting.usage(a.id, '1000'), 20);
  });

  t.test('each period has its own counter', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    await store.counting.consume(spec(a, { periodId: 'p1' }), DAY);
    await store.counting.consume(spec(a, { periodId: 'p1' }), DAY);
    t.same(await store.counting.consume(spec(a, { periodId: 'p2' }), DAY), { kind: 'ok', used: 1 });
    t.equal(await store.counting.usage(a.id, 'p1'), 2);
    t.equal(await store.counting.usage(a.id, 'unused'), 0);
  });

  t.test('an inactive account is refused and nothing is counted', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account({ status: 'inactive' });
    await store.accounts.createAccount(a);
    t.same(await store.counting.consume(spec(a), DAY), { kind: 'inactive' });
    t.equal(await store.counting.usage(a.id, '1000'), 0);
  });

  t.test('a consume made from an outdated copy of the account is refused as changed', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const updated = await store.accounts.updateAccount(a.id, { status: 'inactive' });
    t.equal(updated?.revision, 2);
    t.equal(updated?.status, 'inactive');
    t.same(await store.counting.consume(spec(a), DAY), { kind: 'changed' }, 'old revision');
    t.same(
      await store.counting.consume(spec(a, { accountId: 'acct_gone' }), DAY),
      { kind: 'changed' },
      'no such account',
    );
    t.equal(await store.counting.usage(a.id, '1000'), 0);
    t.equal(await store.accounts.updateAccount('acct_gone', { status: 'active' }), null);
  });

  t.test('a spec used again (as the meter keeps one per account) sees every change made since', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    const other = account();
    await store.accounts.createAccount(a);
    await store.accounts.createAccount(other);
    const kept = spec(a, { limit: 5 });
    t.same(await store.counting.consume(kept, DAY), { kind: 'ok', used: 1 });
    t.same(await store.counting.consume(kept, DAY), { kind: 'ok', used: 2 });
    await store.accounts.updateAccount(other.id, { label: 'another account changed' });
    t.same(
      await store.counting.consume(kept, DAY),
      { kind: 'ok', used: 3 },
      'a change of another account changes nothing',
    );
    await store.counting.refund(a.id, '1000', DAY);
    t.same(await store.counting.consume(kept, DAY), { kind: 'ok', used: 3 }, 'a refund is seen');
    await store.accounts.updateAccount(a.id, { status: 'inactive' });
    t.same(await store.counting.consume(kept, DAY), { kind: 'changed' }, 'its account changed');
    const now = await store.accounts.getAccount(a.id);
    const current = spec(now as StoredAccount, { limit: 5 });
    t.same(await store.counting.consume(current, DAY), { kind: 'inactive' });
    await store.accounts.deleteAccount(a.id);
    t.same(await store.counting.consume(current, DAY), { kind: 'changed' }, 'its account is gone');
  });

  t.test('a spec used again after its counter expired starts a new count', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const kept = spec(a, { limit: 5, expireAtMs: Date.now() + 1500 });
    t.same(await store.counting.consume(kept, DAY), { kind: 'ok', used: 1 });
    t.same(await store.counting.consume(kept, DAY), { kind: 'ok', used: 2 });
    // The backend's own clock expires the counter (Redis's, for Redis): watch it go rather than guess when.
    await waitFor('the counter to expire', async () => (await store.counting.usage(a.id, kept.periodId)) === 0, 3000);
    t.same(await store.counting.consume(kept, DAY), { kind: 'ok', used: 1 }, 'the expired counter was not reused');
  });

  t.test('a plan change mid-period keeps the count and the new limit applies at once', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    await store.counting.consume(spec(a, { limit: 5 }), DAY);
    await store.counting.consume(spec(a, { limit: 5 }), DAY);
    const b = await store.accounts.updateAccount(a.id, { plan: 'starter', limit: 2 });
    t.ok(b);
    t.same(await store.counting.consume(spec(b as StoredAccount, { limit: 2 }), DAY), { kind: 'exhausted', used: 2 });
    t.same(await store.counting.consume(spec(b as StoredAccount, { limit: 10 }), DAY), { kind: 'ok', used: 3 });
  });
  t.test('a consume asked to load counts and brings back the account as stored, in the same call', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const key = a.keys[0] as StoredAccount['keys'][number];
    const cold = spec(a, { limit: 1 });
    cold.load = true;
    cold.touch = key.id;
    const first = await store.counting.consume(cold, DAY);
    t.equal(cold.load, undefined, 'the store took the request');
    t.same(
      first,
      { kind: 'ok', used: 1, account: { ...a, keys: [{ ...key, last_used_on: DAY }] } },
      'counted, with the account as the count left it (its key used today)',
    );
    t.same(await store.counting.consume(spec(a, { limit: 1 }), DAY), { kind: 'exhausted', used: 1 }, 'asked once');
    const refused = spec(a, { limit: 1 });
    refused.load = true;
    const exhausted = await store.counting.consume(refused, DAY);
    t.equal(exhausted.kind === 'exhausted' && exhausted.account?.id, a.id, 'a request over its allowance loads too');
    t.equal(await store.counting.usage(a.id, '1000'), 1, 'loading counts nothing more');
    await store.accounts.updateAccount(a.id, { label: 'edited' });
    const stale = spec(a);
    stale.load = true;
    t.same(await store.counting.consume(stale, DAY), { kind: 'changed' }, 'an outdated copy loads nothing');
    const gone = spec(a, { accountId: 'acct_gone' });
    gone.load = true;
    t.same(await store.counting.consume(gone, DAY), { kind: 'changed' }, 'nor does an account that is gone');
    const off = account({ status: 'inactive' });
    await store.accounts.createAccount(off);
    const inactive = spec(off);
    inactive.load = true;
    t.same(await store.counting.consume(inactive, DAY), { kind: 'inactive' }, 'nor an inactive one');
  });
}
