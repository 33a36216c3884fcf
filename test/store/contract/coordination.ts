import type { Test } from 'tap';
import type { Store, StoreEvent } from '../../../src/store/store.js';
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

  // What a report does differs by backend (the memory store, one process, shares nothing): the
  // Redis effect, a blocked announcement at the limit, is tested in redis.test.ts.
  t.test('an invalid key reported from an address is accepted', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const rule = { maxAttempts: 3, windowMs: 60_000, blockMs: 1000 };
    await t.resolves(store.coordination.reportInvalidKey(`192.0.2.${process.pid % 250}`, rule));
  });

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
