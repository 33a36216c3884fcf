import type { Test } from 'tap';
import type { PriceSet } from '../../src/prices/schema.js';
import type { ConsumeSpec, Store, StoredAccount, StoreEvent } from '../../src/store/types.js';
import { waitFor as waitUntil } from '../helpers/wait.js';

const waitFor = (cond: () => boolean, ms = 2000) => waitUntil('the store events', cond, ms);

/**
 * The store contract: every Store implementation runs this suite unchanged.
 * `make` returns a fresh, empty store; each test gets its own.
 */
export function storeContract(t: Test, make: () => Promise<Store>): void {
  let seq = 0;
  const account = (over: Partial<StoredAccount> = {}): StoredAccount => {
    seq++;
    return {
      id: `acct_test${process.pid}_${seq}_${Math.random().toString(36).slice(2, 8)}`,
      status: 'active',
      plan: 'developer',
      limit: null,
      anchor: '2026-11-01T00:00:00+02:00',
      label: 'contract',
      created_at: '2026-11-01T00:00:00.000Z',
      revision: 1,
      key_hash: `hash-${seq}-${Math.random().toString(36).slice(2)}`,
      ...over,
    };
  };
  const spec = (a: StoredAccount, over: Partial<ConsumeSpec> = {}): ConsumeSpec => ({
    accountId: a.id,
    revision: a.revision,
    periodId: '1000',
    limit: 3,
    expireAtMs: Date.now() + 60_000,
    ...over,
  });
  const priceSet = (date: string, p95 = '21.00'): PriceSet => ({
    effective_date: date,
    updated_at: `${date} 00:01:00`,
    coastal: {
      zone: null,
      price_basis: 'official_regional_reference',
      petrol_93: null,
      petrol_95: p95,
      diesel_50ppm: '20.00',
      diesel_500ppm: '19.90',
    },
    inland: {
      zone: null,
      price_basis: 'official_regional_reference',
      petrol_93: '21.50',
      petrol_95: '21.60',
      diesel_50ppm: null,
      diesel_500ppm: '20.10',
    },
  });

  t.test('an account is found by its key hash and by id, and unknown hashes find nothing', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.createAccount(a);
    t.same(await store.findByKeyHash(a.key_hash), a);
    t.same(await store.getAccount(a.id), a);
    t.equal(await store.findByKeyHash('no-such-hash'), null);
    t.equal(await store.getAccount('acct_missing'), null);
  });

  t.test('creating an account whose id or key hash exists is refused', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.createAccount(a);
    await t.rejects(store.createAccount({ ...a, key_hash: 'other' }));
    await t.rejects(store.createAccount({ ...account(), key_hash: a.key_hash }));
  });

  t.test('consume counts successes up to the limit and never past it', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.createAccount(a);
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await store.consume(spec(a)));
    t.same(results, [
      { kind: 'ok', used: 1 },
      { kind: 'ok', used: 2 },
      { kind: 'ok', used: 3 },
      { kind: 'exhausted', used: 3 },
      { kind: 'exhausted', used: 3 },
    ]);
    t.equal(await store.usage(a.id, '1000'), 3, 'rejected requests are not counted');
  });

  t.test('concurrent consumes admit exactly the limit with distinct counts', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.createAccount(a);
    const results = await Promise.all(Array.from({ length: 60 }, () => store.consume(spec(a, { limit: 20 }))));
    const ok = results.filter((r) => r.kind === 'ok').map((r) => (r.kind === 'ok' ? r.used : 0));
    t.equal(ok.length, 20);
    t.same(
      [...ok].sort((x, y) => x - y),
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    t.equal(await store.usage(a.id, '1000'), 20);
  });

  t.test('each period has its own counter', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.createAccount(a);
    await store.consume(spec(a, { periodId: 'p1' }));
    await store.consume(spec(a, { periodId: 'p1' }));
    t.same(await store.consume(spec(a, { periodId: 'p2' })), { kind: 'ok', used: 1 });
    t.equal(await store.usage(a.id, 'p1'), 2);
    t.equal(await store.usage(a.id, 'unused'), 0);
  });

  t.test('an inactive account is refused and nothing is counted', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account({ status: 'inactive' });
    await store.createAccount(a);
    t.same(await store.consume(spec(a)), { kind: 'inactive' });
    t.equal(await store.usage(a.id, '1000'), 0);
  });

  t.test('a consume made from an outdated copy of the account is refused as changed', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.createAccount(a);
    const updated = await store.updateAccount(a.id, { status: 'inactive' });
    t.equal(updated?.revision, 2);
    t.equal(updated?.status, 'inactive');
    t.same(await store.consume(spec(a)), { kind: 'changed' }, 'old revision');
    t.same(await store.consume(spec(a, { accountId: 'acct_gone' })), { kind: 'changed' }, 'no such account');
    t.equal(await store.usage(a.id, '1000'), 0);
    t.equal(await store.updateAccount('acct_gone', { status: 'active' }), null);
  });

  t.test('a spec used again (as the meter keeps one per account) sees every change made since', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    const other = account();
    await store.createAccount(a);
    await store.createAccount(other);
    const kept = spec(a, { limit: 5 });
    t.same(await store.consume(kept), { kind: 'ok', used: 1 });
    t.same(await store.consume(kept), { kind: 'ok', used: 2 });
    await store.updateAccount(other.id, { label: 'another account changed' });
    t.same(await store.consume(kept), { kind: 'ok', used: 3 }, 'a change of another account changes nothing');
    await store.refund(a.id, '1000');
    t.same(await store.consume(kept), { kind: 'ok', used: 3 }, 'a refund is seen');
    await store.updateAccount(a.id, { status: 'inactive' });
    t.same(await store.consume(kept), { kind: 'changed' }, 'its account changed');
    const now = await store.getAccount(a.id);
    const current = spec(now as StoredAccount, { limit: 5 });
    t.same(await store.consume(current), { kind: 'inactive' });
    await store.deleteAccount(a.id);
    t.same(await store.consume(current), { kind: 'changed' }, 'its account is gone');
  });

  t.test('a spec used again after its counter expired starts a new count', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.createAccount(a);
    const kept = spec(a, { limit: 5, expireAtMs: Date.now() + 1500 });
    t.same(await store.consume(kept), { kind: 'ok', used: 1 });
    t.same(await store.consume(kept), { kind: 'ok', used: 2 });
    await new Promise((r) => setTimeout(r, 2100));
    t.same(await store.consume(kept), { kind: 'ok', used: 1 }, 'the expired counter was not reused');
  });

  t.test('a plan change mid-period keeps the count and the new limit applies at once', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.createAccount(a);
    await store.consume(spec(a, { limit: 5 }));
    await store.consume(spec(a, { limit: 5 }));
    const b = await store.updateAccount(a.id, { plan: 'starter', limit: 2 });
    t.ok(b);
    t.same(await store.consume(spec(b as StoredAccount, { limit: 2 })), { kind: 'exhausted', used: 2 });
    t.same(await store.consume(spec(b as StoredAccount, { limit: 10 })), { kind: 'ok', used: 3 });
  });

  t.test('rotating the key moves the account to the new hash and announces both hashes', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const events: StoreEvent[] = [];
    store.subscribe((e) => events.push(e));
    const a = account();
    await store.createAccount(a);
    await store.updateAccount(a.id, { key_hash: `new-hash-${a.id}` });
    t.equal(await store.findByKeyHash(a.key_hash), null);
    t.equal((await store.findByKeyHash(`new-hash-${a.id}`))?.id, a.id);
    await waitFor(() => events.some((e) => e.type === 'account' && e.keyHashes.includes(`new-hash-${a.id}`)));
    const rotation = events.find((e) => e.type === 'account' && e.keyHashes.includes(`new-hash-${a.id}`));
    t.same(
      rotation && rotation.type === 'account' ? [...rotation.keyHashes].sort() : [],
      [a.key_hash, `new-hash-${a.id}`].sort(),
    );
  });

  t.test('price sets: one per date, oldest first; replace decides whether a date is overwritten', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const events: StoreEvent[] = [];
    store.subscribe((e) => events.push(e));
    t.equal(await store.putPriceSet(priceSet('2026-02-04'), false), true);
    t.equal(await store.putPriceSet(priceSet('2026-01-07'), false), true);
    t.equal(await store.putPriceSet(priceSet('2026-01-07', '99.99'), false), false, 'kept');
    t.same(
      (await store.listPriceSets()).map((s) => [s.effective_date, s.coastal.petrol_95]),
      [
        ['2026-01-07', '21.00'],
        ['2026-02-04', '21.00'],
      ],
    );
    t.equal(await store.putPriceSet(priceSet('2026-01-07', '22.22'), true), true, 'replaced');
    t.same(await store.listPriceSets(), [priceSet('2026-01-07', '22.22'), priceSet('2026-02-04')]);
    await waitFor(() => events.filter((e) => e.type === 'prices').length >= 3);
    t.pass('every accepted set is announced');
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
    for (const a of made) await store.createAccount(a);
    const ids = (page: { accounts: StoredAccount[] }) => page.accounts.map((a) => a.id);

    const all = await store.listAccounts({}, null, 10);
    t.same(ids(all), ['acct_a', 'acct_b', 'acct_c', 'acct_d', 'acct_e'], 'in id order');
    t.equal(all.next, null, 'the last page has no cursor');
    t.same(all.accounts[0], made[1], 'accounts come back whole');
    t.same(ids(await store.listAccounts({ status: 'inactive' }, null, 10)), ['acct_a']);
    t.same(ids(await store.listAccounts({ plan: 'starter', status: 'active' }, null, 10)), [
      'acct_b',
      'acct_c',
      'acct_e',
    ]);
    t.same(
      ids(await store.listAccounts({ label: 'ACME' }, null, 10)),
      ['acct_a', 'acct_b', 'acct_e'],
      'a substring, ignoring case',
    );
    t.same(ids(await store.listAccounts({ label: '.' }, null, 10)), ['acct_d'], 'a dot is a dot, not any character');
    t.same(ids(await store.listAccounts({ label: '(retail)' }, null, 10)), ['acct_a'], 'parentheses are literal');
    t.same(ids(await store.listAccounts({ label: '.*' }, null, 10)), [], 'no pattern matching');
    t.same(ids(await store.listAccounts({ plan: 'gold' }, null, 10)), []);

    // Following the cursor visits every match once, pages never longer than the limit.
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page: Awaited<ReturnType<Store['listAccounts']>> = await store.listAccounts({ plan: 'starter' }, after, 2);
      t.ok(page.accounts.length <= 2, 'at most the limit');
      seen.push(...ids(page));
      if (page.next === null) break;
      after = page.next;
    }
    t.same(seen, ['acct_a', 'acct_b', 'acct_c', 'acct_e']);
    t.same(
      ids(await store.listAccounts({}, 'acct_bz', 10)),
      ['acct_c', 'acct_d', 'acct_e'],
      'a cursor naming no account continues after it',
    );
    t.same(await store.listAccounts({}, 'acct_e', 10), { accounts: [], next: null }, 'past the end');
  });

  t.test(
    'deleting an account: its key and id find nothing, counting is refused, its key hash is announced, once',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const events: StoreEvent[] = [];
      store.subscribe((e) => events.push(e));
      const a = account();
      const kept = account();
      await store.createAccount(a);
      await store.createAccount(kept);
      await store.consume(spec(a));
      await waitFor(() => events.filter((e) => e.type === 'account').length >= 2);
      events.length = 0;
      t.same(await store.deleteAccount(a.id), a, 'answers the account as it was');
      t.equal(await store.getAccount(a.id), null);
      t.equal(await store.findByKeyHash(a.key_hash), null);
      t.same(await store.consume(spec(a)), { kind: 'changed' }, 'a cached copy cannot count');
      t.equal(await store.updateAccount(a.id, { status: 'inactive' }), null, 'nor be patched back');
      t.same(
        (await store.listAccounts({}, null, 10)).accounts.map((x) => x.id),
        [kept.id],
        'gone from the listing',
      );
      await waitFor(() => events.length >= 1);
      t.same(events[0], { type: 'account', id: a.id, keyHashes: [a.key_hash] });
      t.equal(await store.deleteAccount(a.id), null, 'a second delete finds nothing');
      t.equal(await store.deleteAccount('acct_never'), null);
      t.same(await store.findByKeyHash(kept.key_hash), kept, 'other accounts are untouched');
    },
  );

  t.test('many price sets are stored at once and announced once; replace decides for existing dates', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const events: StoreEvent[] = [];
    store.subscribe((e) => events.push(e));
    await store.putPriceSet(priceSet('2026-01-07', '11.11'), false);
    await waitFor(() => events.length >= 1);
    events.length = 0;
    t.equal(
      await store.putPriceSets([priceSet('2026-01-07'), priceSet('2026-02-04'), priceSet('2026-03-04')], false),
      2,
      'the existing date is kept',
    );
    t.same(
      (await store.listPriceSets()).map((s) => [s.effective_date, s.coastal.petrol_95]),
      [
        ['2026-01-07', '11.11'],
        ['2026-02-04', '21.00'],
        ['2026-03-04', '21.00'],
      ],
    );
    t.equal(await store.putPriceSets([priceSet('2026-01-07', '22.22'), priceSet('2026-04-01')], true), 2);
    t.equal((await store.listPriceSets())[0]?.coastal.petrol_95, '22.22', 'replaced');
    t.equal(await store.putPriceSets([priceSet('2026-04-01')], false), 0, 'nothing new');
    await waitFor(() => events.length >= 2);
    await new Promise((r) => setTimeout(r, 100));
    t.equal(events.length, 2, 'one announcement per call that stored something');
  });

  t.test('deleting a price set removes that date only and announces it', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const events: StoreEvent[] = [];
    store.subscribe((e) => events.push(e));
    await store.putPriceSets([priceSet('2026-01-07'), priceSet('2026-02-04')], false);
    await waitFor(() => events.length >= 1);
    events.length = 0;
    t.equal(await store.deletePriceSet('2026-02-04'), true);
    t.same(
      (await store.listPriceSets()).map((s) => s.effective_date),
      ['2026-01-07'],
    );
    await waitFor(() => events.some((e) => e.type === 'prices'));
    t.equal(await store.deletePriceSet('2026-02-04'), false, 'a second time finds none');
    t.equal(await store.deletePriceSet('1999-01-01'), false);
  });

  t.test('ping answers', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    await t.resolves(store.ping());
  });
}
