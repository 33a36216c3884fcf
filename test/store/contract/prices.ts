import type { Test } from 'tap';
import type { Store, StoreEvent } from '../../../src/store/store.js';
import { priceSet, waitFor } from './fixtures.js';

/**
 * The price-history contract (store/prices/interface.ts): every backend runs it unchanged.
 * `make` returns a fresh, empty store; each test gets its own.
 */
export function pricesContract(t: Test, make: () => Promise<Store>): void {
  t.test('price sets: one per date, oldest first; replace decides whether a date is overwritten', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const events: StoreEvent[] = [];
    store.coordination.subscribe((e) => events.push(e));
    t.same(await store.prices.putPriceSet(priceSet('2026-02-04'), false), { effective_date: '2026-02-04', seq: 1 });
    t.same(await store.prices.putPriceSet(priceSet('2026-01-07'), false), { effective_date: '2026-01-07', seq: 2 });
    t.equal(await store.prices.putPriceSet(priceSet('2026-01-07', '99.99'), false), null, 'kept');
    t.same(
      (await store.prices.listPriceSets()).map((s) => [s.effective_date, s.coastal.petrol_95]),
      [
        ['2026-01-07', '21.00'],
        ['2026-02-04', '21.00'],
      ],
    );
    t.same(
      await store.prices.putPriceSet(priceSet('2026-01-07', '22.22'), true),
      { effective_date: '2026-01-07', seq: 3 },
      'replaced',
    );
    t.equal(
      await store.prices.putPriceSet(priceSet('2026-01-07', '22.22'), true),
      null,
      'the same set again is no change',
    );
    t.same(await store.prices.listPriceSets(), [priceSet('2026-01-07', '22.22'), priceSet('2026-02-04')]);
    await waitFor(() => events.filter((e) => e.type === 'prices').length >= 3);
    t.pass('every accepted set is announced');
  });

  t.test('many price sets are stored at once and announced once; replace decides for existing dates', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const events: StoreEvent[] = [];
    store.coordination.subscribe((e) => events.push(e));
    await store.prices.putPriceSet(priceSet('2026-01-07', '11.11'), false);
    await waitFor(() => events.length >= 1);
    events.length = 0;
    t.same(
      await store.prices.putPriceSets([priceSet('2026-01-07'), priceSet('2026-02-04'), priceSet('2026-03-04')], false),
      [
        { effective_date: '2026-02-04', seq: 2 },
        { effective_date: '2026-03-04', seq: 3 },
      ],
      'the existing date is kept',
    );
    t.same(
      (await store.prices.listPriceSets()).map((s) => [s.effective_date, s.coastal.petrol_95]),
      [
        ['2026-01-07', '11.11'],
        ['2026-02-04', '21.00'],
        ['2026-03-04', '21.00'],
      ],
    );
    t.same(
      await store.prices.putPriceSets(
        [priceSet('2026-02-04'), priceSet('2026-01-07', '22.22'), priceSet('2026-04-01')],
        true,
      ),
      [
        { effective_date: '2026-01-07', seq: 4 },
        { effective_date: '2026-04-01', seq: 5 },
      ],
      'the set a date holds already is no change',
    );
    t.equal((await store.prices.listPriceSets())[0]?.coastal.petrol_95, '22.22', 'replaced');
    t.same(await store.prices.putPriceSets([priceSet('2026-04-01')], false), [], 'nothing new');
    // On a cluster the price sets' node and the marker's node may differ, and messages from two
    // nodes can arrive in either order: wait for the two announcements first, then use the marker
    // to see that no third (from the call that stored nothing) follows.
    await waitFor(() => events.filter((e) => e.type === 'prices').length >= 2);
    await store.coordination.purgeCache('/marker');
    await waitFor(() => events.some((e) => e.type === 'cache_purge'));
    t.equal(events.filter((e) => e.type === 'prices').length, 2, 'one announcement per call that stored something');
  });

  t.test('deleting a price set removes that date only and announces it', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const events: StoreEvent[] = [];
    store.coordination.subscribe((e) => events.push(e));
    await store.prices.putPriceSets([priceSet('2026-01-07'), priceSet('2026-02-04')], false);
    await waitFor(() => events.length >= 1);
    events.length = 0;
    t.same(await store.prices.deletePriceSet('2026-02-04'), { effective_date: '2026-02-04', seq: 3 }, 'a change too');
    t.same(
      (await store.prices.listPriceSets()).map((s) => s.effective_date),
      ['2026-01-07'],
    );
    await waitFor(() => events.some((e) => e.type === 'prices'));
    t.equal(await store.prices.deletePriceSet('2026-02-04'), null, 'a second time finds none');
    t.equal(await store.prices.deletePriceSet('1999-01-01'), null);
  });

  t.test(
    'a change that brings back a set seen before gets a new number: publish, cancel, publish; A, B, A',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const seqs: Array<number | undefined> = [];
      seqs.push((await store.prices.putPriceSet(priceSet('2027-01-06', '30.00'), true))?.seq);
      seqs.push((await store.prices.deletePriceSet('2027-01-06'))?.seq);
      seqs.push((await store.prices.putPriceSet(priceSet('2027-01-06', '30.00'), true))?.seq);
      for (const p of ['31.00', '32.00', '31.00'])
        seqs.push((await store.prices.putPriceSet(priceSet('2027-01-13', p), true))?.seq);
      t.same(seqs, [1, 2, 3, 4, 5, 6], 'each change numbered, one after the other');
      t.same(
        (await store.prices.listPriceSets()).map((s) => [s.effective_date, s.coastal.petrol_95]),
        [
          ['2027-01-06', '30.00'],
          ['2027-01-13', '31.00'],
        ],
        'the numbering is not a price set',
      );
    },
  );
}
