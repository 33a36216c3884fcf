import type { Test } from 'tap';
import type { Store, StoredAccount, StoreEvent } from '../../../src/store/store.js';
import { account, DAY, hashOf, spec, storedKey, waitFor } from './fixtures.js';

/**
 * The accounts contract (store/accounts/interface.ts): every backend runs it unchanged. `make`
 * returns a fresh, empty store; each test gets its own. Announcements are heard through
 * `subscribe`, and a deleted account's cached copy is tried with `consume`.
 */
export function accountsContract(t: Test, make: () => Promise<Store>): void {
  t.test('an account is found by its key hash and by id, and unknown hashes find nothing', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    t.same(await store.accounts.findByKeyHash(hashOf(a)), a);
    t.same(await store.accounts.getAccount(a.id), a);
    t.equal(await store.accounts.findByKeyHash('no-such-hash'), null);
    t.equal(await store.accounts.getAccount('acct_missing'), null);
  });

  t.test(
    'an account keeps its external ids and settings: each id read back, a patch replaces or removes them',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const ids = { stripe_customer: 'cus_NffrFeUfNV2Hib', billing_subject: 'acme-fleet' };
      const a = account({ external_ids: ids, burst: { limit: 5, window_s: 10 }, overage: { max_percent: 20 } });
      await store.accounts.createAccount(a);
      t.same(await store.accounts.getAccount(a.id), a, 'both ids, the burst and the overage');
      t.same(await store.accounts.findByKeyHash(hashOf(a)), a);
      const one = await store.accounts.updateAccount(a.id, { external_ids: { billing_subject: 'renamed' } });
      t.same(one?.external_ids, { billing_subject: 'renamed' }, 'a patch replaces the ids');
      t.same((await store.accounts.getAccount(a.id))?.external_ids, { billing_subject: 'renamed' });
      await store.accounts.updateAccount(a.id, { external_ids: { stripe_customer: 'cus_A1' } });
      t.same((await store.accounts.getAccount(a.id))?.external_ids, { stripe_customer: 'cus_A1' });
      await store.accounts.updateAccount(a.id, { external_ids: null, burst: null });
      const none = await store.accounts.getAccount(a.id);
      t.notOk(none && 'external_ids' in none, 'null removes them');
      t.notOk(none && 'burst' in none);
      t.same(none?.overage, { max_percent: 20 }, 'a setting not named is kept');
      await store.accounts.updateAccount(a.id, { external_ids: ids });
      await store.accounts.updateAccount(a.id, { external_ids: {} });
      const empty = await store.accounts.getAccount(a.id);
      t.notOk(empty && 'external_ids' in empty, 'so does an empty set');
    },
  );

  t.test('creating an account whose id or key hash exists is refused', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    await t.rejects(store.accounts.createAccount({ ...a, keys: [storedKey()] }));
    await t.rejects(store.accounts.createAccount(account({ keys: [storedKey({ key_hash: hashOf(a) })] })));
  });

  t.test('an account change announces every key hash of the account', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const events: StoreEvent[] = [];
    store.coordination.subscribe((e) => events.push(e));
    const two = [storedKey(), storedKey({ name: 'second' })];
    const a = account({ keys: two });
    await store.accounts.createAccount(a);
    t.equal((await store.accounts.findByKeyHash(two[1]?.key_hash as string))?.id, a.id, 'found by either key');
    await store.accounts.updateAccount(a.id, { label: 'renamed' });
    await waitFor(() => events.some((e) => e.type === 'account' && e.id === a.id && e.keyHashes.length === 2));
    const change = events.filter((e) => e.type === 'account' && e.id === a.id).at(-1);
    t.same(change && change.type === 'account' ? [...change.keyHashes].sort() : [], two.map((k) => k.key_hash).sort());
  });

  t.test('listing: id order, filters by status, plan and label (literal, any case), pages by cursor', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const made = [
      account({ id: 'acct_b', label: 'Acme Fleet', plan: 'starter' }),
      account({ id: 'acct_a', label: 'acme (retail)', plan: 'starter', status: 'inactive' }),
      account({ id: 'acct_d', label: 'A.C.M.E.', plan: 'business' }),
      account({ id: 'acct_c', label: 'Beta', plan: 'starter' }),
      account({ id: 'acct_e', label: 'acmex', plan: 'starter' }),
    ];
    for (const a of made) await store.accounts.createAccount(a);
    const ids = (page: { accounts: StoredAccount[] }) => page.accounts.map((a) => a.id);

    const all = await store.accounts.listAccounts({}, null, 10);
    t.same(ids(all), ['acct_a', 'acct_b', 'acct_c', 'acct_d', 'acct_e'], 'in id order');
    t.equal(all.next, null, 'the last page has no cursor');
    t.same(all.accounts[0], made[1], 'accounts come back whole');
    t.same(ids(await store.accounts.listAccounts({ status: 'inactive' }, null, 10)), ['acct_a']);
    t.same(ids(await store.accounts.listAccounts({ plan: 'starter', status: 'active' }, null, 10)), [
      'acct_b',
      'acct_c',
      'acct_e',
    ]);
    t.same(
      ids(await store.accounts.listAccounts({ label: 'ACME' }, null, 10)),
      ['acct_a', 'acct_b', 'acct_e'],
      'a substring, ignoring case',
    );
    t.same(
      ids(await store.accounts.listAccounts({ label: '.' }, null, 10)),
      ['acct_d'],
      'a dot is a dot, not any character',
    );
    t.same(
      ids(await store.accounts.listAccounts({ label: '(retail)' }, null, 10)),
      ['acct_a'],
      'parentheses are literal',
    );
    t.same(ids(await store.accounts.listAccounts({ label: '.*' }, null, 10)), [], 'no pattern matching');
    t.same(ids(await store.accounts.listAccounts({ plan: 'gold' }, null, 10)), []);

    // Following the cursor visits every match once, pages never longer than the limit.
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page: Awaited<ReturnType<Store['accounts']['listAccounts']>> = await store.accounts.listAccounts(
        { plan: 'starter' },
        after,
        2,
      );
      t.ok(page.accounts.length <= 2, 'at most the limit');
      seen.push(...ids(page));
      if (page.next === null) break;
      after = page.next;
    }
    t.same(seen, ['acct_a', 'acct_b', 'acct_c', 'acct_e']);
    t.same(
      ids(await store.accounts.listAccounts({}, 'acct_bz', 10)),
      ['acct_c', 'acct_d', 'acct_e'],
      'a cursor naming no account continues after it',
    );
    t.same(await store.accounts.listAccounts({}, 'acct_e', 10), { accounts: [], next: null }, 'past the end');
  });

  t.test(
    'deleting an account: its key and id find nothing, counting is refused, its key hash is announced, once',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const events: StoreEvent[] = [];
      store.coordination.subscribe((e) => events.push(e));
      const a = account();
      const kept = account();
      await store.accounts.createAccount(a);
      await store.accounts.createAccount(kept);
      await store.counting.consume(spec(a), DAY);
      await waitFor(() => events.filter((e) => e.type === 'account').length >= 2);
      events.length = 0;
      t.same(await store.accounts.deleteAccount(a.id), a, 'answers the account as it was');
      t.equal(await store.accounts.getAccount(a.id), null);
      t.equal(await store.accounts.findByKeyHash(hashOf(a)), null);
      t.same(await store.counting.consume(spec(a), DAY), { kind: 'changed' }, 'a cached copy cannot count');
      t.equal(await store.accounts.updateAccount(a.id, { status: 'inactive' }), null, 'nor be patched back');
      t.same(
        (await store.accounts.listAccounts({}, null, 10)).accounts.map((x) => x.id),
        [kept.id],
        'gone from the listing',
      );
      await waitFor(() => events.length >= 1);
      t.same(events[0], { type: 'account', id: a.id, keyHashes: [hashOf(a)] });
      t.equal(await store.accounts.deleteAccount(a.id), null, 'a second delete finds nothing');
      t.equal(await store.accounts.deleteAccount('acct_never'), null);
      t.same(await store.accounts.findByKeyHash(hashOf(kept)), kept, 'other accounts are untouched');
    },
  );
}
