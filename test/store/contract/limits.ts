import type { Test } from 'tap';
import type { ConsumeResult, Store } from '../../../src/store/store.js';
import { waitFor } from '../../helpers/wait.js';
import { account, DAY, hashOf, spec } from './fixtures.js';

const WIDE: [number, number] = [0, Date.now() + 86_400_000];
const record = { plan: 'starter', kind: 'monthly' as const, startMs: 1000, endMs: Date.now() + 86_400_000 };

/**
 * The burst and overage contract (store/counting/interface.ts, docs/plans.md): every backend runs
 * it unchanged. Burst windows run on the store's own clock (Redis' TIME on Redis), so the waits
 * here are conditions on the store's answers, never a sleep.
 */
export function limitsContract(t: Test, make: () => Promise<Store>): void {
  t.test(
    'burst: concurrent consumes admit exactly the burst limit; the refused are not counted, not in the ledger',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const a = account();
      await store.accounts.createAccount(a);
      const s = spec(a, { limit: 100, burst: { limit: 5, windowMs: 60_000 }, record });
      const results = await Promise.all(Array.from({ length: 30 }, () => store.counting.consume(s, DAY)));
      const ok = results.filter((r) => r.kind === 'ok');
      const refused = results.filter((r) => r.kind === 'burst');
      t.equal(ok.length, 5, 'the burst limit, no more');
      t.equal(refused.length, 25, 'every other one refused as over the burst');
      t.same(
        ok.map((r) => r.used).sort((x, y) => x - y),
        [1, 2, 3, 4, 5],
      );
      for (const r of refused) {
        t.equal(r.burst.remaining, 0);
        t.ok(r.burst.resetMs > 0 && r.burst.resetMs <= 60_000, `wait ${r.burst.resetMs} ms within the window`);
      }
      t.equal(await store.counting.usage(a.id, '1000'), 5, 'refused requests are not counted');
      const [records] = await store.counting.periodRecords([a.id], ...WIDE);
      t.same(
        records?.map((r) => [r.used, r.days]),
        [[5, [[DAY, 5]]]],
        'and not in the ledger',
      );
    },
  );

  t.test('burst: an admitted request reports the room left in its window and when it grows', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const s = spec(a, { limit: 100, burst: { limit: 3, windowMs: 60_000 } });
    const first = await store.counting.consume(s, DAY);
    t.equal(first.kind, 'ok');
    if (first.kind !== 'ok' || first.burst === undefined) return t.fail('no burst state');
    t.equal(first.burst.remaining, 2);
    t.ok(first.burst.resetMs > 50_000 && first.burst.resetMs <= 60_000, `${first.burst.resetMs} ms`);
    t.same(
      await store.counting.consume(spec(a, { limit: 100 }), DAY),
      { kind: 'ok', used: 2 },
      'no burst limit: no state',
    );
  });

  t.test('burst: once the oldest admission leaves the window a request is admitted again', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const s = spec(a, { limit: 100, burst: { limit: 2, windowMs: 400 } });
    const before = Date.now();
    t.equal((await store.counting.consume(s, DAY)).kind, 'ok');
    t.equal((await store.counting.consume(s, DAY)).kind, 'ok');
    t.equal((await store.counting.consume(s, DAY)).kind, 'burst', 'the third within the window is refused');
    let admitted: ConsumeResult | undefined;
    await waitFor('a request admitted after the window', async () => {
      admitted = await store.counting.consume(s, DAY);
      return admitted.kind === 'ok';
    });
    // The first admission was at or after `before`, and this one a full window after it.
    t.ok(Date.now() - before >= 399, `admitted ${Date.now() - before} ms after the first`);
    t.equal(admitted?.kind === 'ok' && admitted.used, 3);
    t.equal(await store.counting.usage(a.id, '1000'), 3, 'the refused ones in between were not counted');
  });

  t.test('burst: a used-up allowance answers exhausted before the burst', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const s = spec(a, { limit: 2, burst: { limit: 1, windowMs: 60_000 } });
    t.equal((await store.counting.consume(s, DAY)).kind, 'ok');
    t.equal((await store.counting.consume(s, DAY)).kind, 'burst');
    t.equal((await store.counting.consume(spec(a, { limit: 2 }), DAY)).kind, 'ok', 'no burst limit: counted');
    t.equal((await store.counting.consume(s, DAY)).kind, 'exhausted');
  });

  t.test('overage: past the limit requests are counted up to the cap, then refused', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const s = spec(a, { limit: 4, cap: 6, record });
    const results = [];
    for (let i = 0; i < 8; i++) results.push(await store.counting.consume(s, DAY));
    t.same(
      results.map((r) => (r.kind === 'ok' || r.kind === 'exhausted' ? `${r.kind}:${r.used}` : r.kind)),
      ['ok:1', 'ok:2', 'ok:3', 'ok:4', 'ok:5', 'ok:6', 'exhausted:6', 'exhausted:6'],
    );
    const [records] = await store.counting.periodRecords([a.id], ...WIDE);
    t.same(
      records?.map((r) => [r.limit, r.used, r.days]),
      [[4, 6, [[DAY, 6]]]],
      'the ledger has the overage, the record the limit',
    );
  });

  t.test('accounts: burst and overage are kept, replaced, and removed by null', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account({ burst: { limit: 10, window_s: 1 } });
    await store.accounts.createAccount(a);
    t.same((await store.accounts.getAccount(a.id))?.burst, { limit: 10, window_s: 1 });
    const patched = await store.accounts.updateAccount(a.id, {
      burst: { limit: 5, window_s: 60 },
      overage: { max_percent: 50 },
    });
    t.same([patched?.burst, patched?.overage], [{ limit: 5, window_s: 60 }, { max_percent: 50 }]);
    const found = await store.accounts.findByKeyHash(hashOf(a));
    t.same([found?.burst, found?.overage], [{ limit: 5, window_s: 60 }, { max_percent: 50 }]);
    const cleared = await store.accounts.updateAccount(a.id, { burst: null, overage: null });
    t.notOk(cleared && 'burst' in cleared, 'no burst');
    t.notOk(cleared && 'overage' in cleared, 'no overage');
  });
}
