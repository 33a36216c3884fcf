import type { Test } from 'tap';
import type { AccountPage, Store, StoredAccount } from '../../../src/store/store.js';
import { waitFor } from '../../helpers/wait.js';
import { account, DAY, hashOf, spec } from './fixtures.js';

const WIDE: [number, number] = [0, 8e15];
const RECORD = { plan: 'starter', kind: 'monthly' as const, startMs: 1000, endMs: 2000 };
const byId = (a: StoredAccount, b: StoredAccount): number => (a.id < b.id ? -1 : 1);

/**
 * A deleted account's usage history outlives it: its records stay until they expire, and the
 * account as it was is kept as long, for the exports to name it. Runs on every backend.
 */
export function deletedContract(t: Test, make: () => Promise<Store>): void {
  t.test(
    'deleted accounts: one with period records is kept as it was, listed in id order, while its key finds nothing',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const [a, b, c, live] = [account({ label: 'A (gone)' }), account(), account({ limit: 7 }), account()];
      for (const x of [a, b, c, live]) await store.accounts.createAccount(x);
      await store.counting.consume(spec(a, { record: RECORD }), DAY);
      await store.counting.consume(spec(c, { record: RECORD }), DAY);
      for (const x of [a, b, c]) await store.accounts.deleteAccount(x.id);

      const kept = [a, c].sort(byId);
      t.same((await store.accounts.listDeletedAccounts(null, 10)).accounts, kept, 'those with records, as they were');
      const seen: StoredAccount[] = [];
      let after: string | null = null;
      for (let pages = 0; pages < 5; pages++) {
        const page: AccountPage = await store.accounts.listDeletedAccounts(after, 1);
        t.ok(page.accounts.length <= 1, 'at most the limit');
        seen.push(...page.accounts);
        if (page.next === null) break;
        after = page.next;
      }
      t.same(seen, kept, 'following the cursor visits each once');
      t.same(await store.accounts.getDeletedAccount(a.id), a);
      t.equal(await store.accounts.getDeletedAccount(b.id), null, 'one without records is not kept');
      t.equal(await store.accounts.getDeletedAccount(live.id), null, 'nor is one not deleted');
      t.equal(await store.accounts.findByKeyHash(hashOf(a)), null, 'its key finds nothing');
      t.equal(await store.accounts.getAccount(a.id), null);
      t.same(
        (await store.accounts.listAccounts({}, null, 10)).accounts.map((x) => x.id),
        [live.id],
        'not among the accounts',
      );
      const [records] = await store.counting.periodRecords([a.id], ...WIDE);
      t.equal(records?.[0]?.used, 1, 'its records stay');
      t.same(await store.counting.consume(spec(a, { record: RECORD }), DAY), { kind: 'changed' }, 'and count nothing');
    },
  );

  t.test('deleted accounts: kept until the last of their records expires, then gone', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    await store.counting.consume(spec(a, { record: RECORD, expireAtMs: Date.now() + 1500 }), DAY);
    await store.accounts.deleteAccount(a.id);
    t.same(await store.accounts.getDeletedAccount(a.id), a);
    await waitFor(
      'the records to expire',
      async () => (await store.accounts.listDeletedAccounts(null, 10)).accounts.length === 0,
      10_000,
    );
    t.equal(await store.accounts.getDeletedAccount(a.id), null);
    t.same(await store.counting.periodRecords([a.id], ...WIDE), [[]]);
  });
}
