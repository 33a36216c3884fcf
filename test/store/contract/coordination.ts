import type { Test } from 'tap';
import type { AttemptChange, Store, StoreEvent } from '../../../src/store/store.js';
import { priceSet, waitFor } from './fixtures.js';

/**
 * The coordination contract (store/coordination/interface.ts): every backend runs it unchanged.
 * What differs by backend (a Redis lease is exclusive across instances; one process holds every
 * lease) is tested beside that backend. A price change is the announcement listened for.
 */
export function coordinationContract(t: Test, make: () => Promise<Store>): void {
  t.test('ping answers', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    await t.resolves(store.ping());
  });

  t.test('a note is read back by name, and a note never written reads null', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const name = `note-${process.pid}-${Math.random().toString(36).slice(2)}`;
    t.equal(await store.coordination.getNote(name), null);
    await store.coordination.putNote(name, '{"state":"ok"}');
    t.equal(await store.coordination.getNote(name), '{"state":"ok"}');
    await store.coordination.putNote(name, 'second');
    t.equal(await store.coordination.getNote(name), 'second', 'a note is replaced');
  });

  t.test('a lease is taken and renewed by its holder; once given up another holder takes it', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const name = `lease-${process.pid}-${Math.random().toString(36).slice(2)}`;
    t.equal(await store.coordination.lease(name, 'a', 5000), true, 'taken');
    t.equal(await store.coordination.lease(name, 'a', 5000), true, 'renewed');
    await store.coordination.releaseLease(name, 'a');
    t.equal(await store.coordination.lease(name, 'b', 5000), true, 'taken by another at once');
    await store.coordination.releaseLease(name, 'b');
  });

  const change = (c: Partial<AttemptChange>): AttemptChange => ({
    want: 0,
    released: 0,
    failed: 0,
    unreserved: 0,
    ...c,
  });
  const someAddress = (): string => `192.0.2.${Math.floor(Math.random() * 250)}-${process.pid}`;

  t.test(
    'attempts at keys: reservations up to the limit less invalid keys and reservations held; given back, granted again',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const rule = { maxAttempts: 5, windowMs: 60_000, blockMs: 60_000 };
      const address = someAddress();
      const attempts = (c: Partial<AttemptChange>) => store.coordination.invalidKeyAttempts(address, rule, change(c));
      t.same(await attempts({ want: 3 }), { granted: 3, room: true, blockedMs: 0 }, 'three of five');
      t.same(await attempts({ want: 9 }), { granted: 2, room: false, blockedMs: 0 }, 'the two left, and no room');
      t.same(await attempts({ want: 1 }), { granted: 0, room: false, blockedMs: 0 }, 'none while all five are held');
      t.same(
        await attempts({ released: 2, want: 1 }),
        { granted: 1, room: true, blockedMs: 0 },
        'two given back: one taken again, four held',
      );
      t.same(await attempts({ failed: 1 }), { granted: 0, room: true, blockedMs: 0 }, 'one held fails: three held');
      t.same(
        await attempts({ released: 3, want: 9 }),
        { granted: 4, room: false, blockedMs: 0 },
        'the rest given back: four granted, for the failed one still counts as an invalid key',
      );
    },
  );

  t.test(
    'attempts at keys: the change whose invalid keys reach the limit blocks the address and announces it once; blocked, nothing is granted',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const heard: StoreEvent[] = [];
      store.coordination.subscribe((e) => heard.push(e));
      const rule = { maxAttempts: 4, windowMs: 60_000, blockMs: 30_000 };
      const address = someAddress();
      const attempts = (c: Partial<AttemptChange>) => store.coordination.invalidKeyAttempts(address, rule, change(c));
      t.same(await attempts({ want: 2, unreserved: 1 }), { granted: 2, room: true, blockedMs: 0 });
      const blocked = await attempts({ failed: 2, unreserved: 1, want: 1 });
      t.equal(blocked.granted, 0, 'the fourth invalid key: nothing granted');
      t.equal(blocked.blockedMs, 30_000, 'blocked for block_s');
      const later = await attempts({ want: 1, unreserved: 1 });
      t.equal(later.granted, 0, 'nothing granted while blocked');
      t.ok(later.blockedMs > 25_000 && later.blockedMs <= 30_000, `still blocked: ${later.blockedMs} ms`);
      await waitFor(() => heard.some((e) => e.type === 'blocked'));
      await store.coordination.purgeCache('/after-the-block');
      await waitFor(() => heard.some((e) => e.type === 'cache_purge'));
      t.same(
        heard.filter((e) => e.type === 'blocked'),
        [{ type: 'blocked', address, ms: 30_000 }],
        'announced once',
      );
    },
  );

  t.test('every listener hears every change', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const first: StoreEvent[] = [];
    const second: StoreEvent[] = [];
    store.coordination.subscribe((e) => first.push(e));
    store.coordination.subscribe((e) => second.push(e));
    await store.prices.putPriceSet(priceSet('2026-05-06'), false);
    await waitFor(() => first.some((e) => e.type === 'prices') && second.some((e) => e.type === 'prices'));
    t.pass('both listeners heard the price change');
  });

  t.test('a cache purge is announced to every listener, with its path or null for all', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const heard: StoreEvent[] = [];
    store.coordination.subscribe((e) => heard.push(e));
    await store.coordination.purgeCache('/origin/echo');
    await store.coordination.purgeCache(null);
    await waitFor(() => heard.filter((e) => e.type === 'cache_purge').length >= 2);
    // No order is promised between two announcements: on Redis Cluster each publish may go
    // through another node, and they have arrived swapped. Both, once each, is the contract.
    const key = (e: unknown): string => JSON.stringify(e);
    t.same(
      heard
        .filter((e) => e.type === 'cache_purge')
        .map(key)
        .sort(),
      [
        { type: 'cache_purge', path: '/origin/echo' },
        { type: 'cache_purge', path: null },
      ]
        .map(key)
        .sort(),
    );
  });
}
