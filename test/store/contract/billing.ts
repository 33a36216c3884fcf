import type { Test } from 'tap';
import type { ConsumeSpec, Store, StoredAccount } from '../../../src/store/store.js';
import { account, spec } from './fixtures.js';

const START = Date.now() - 86_400_000;
const periodSpec = (a: StoredAccount, periodId = String(START), over: Partial<ConsumeSpec> = {}): ConsumeSpec =>
  spec(a, {
    periodId,
    limit: 1000,
    expireAtMs: Date.now() + 3_600_000,
    record: { plan: 'starter', kind: 'monthly', startMs: Number(periodId), endMs: Number(periodId) + 30 * 86_400_000 },
    ...over,
  });
const TS = Date.parse('2026-11-26T10:00:00Z');
/** The whole id of an event of that span: the span, then the tag drawn when it was written. */
const idOf = (exporter: string, accountId: string, span: string): RegExp =>
  new RegExp(`^fpg\\.${exporter}\\.${accountId}\\.${span}\\.[0-9a-f]{10}$`);

async function counted(store: Store, s: ConsumeSpec, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await store.counting.consume(s, '2026-11-26');
}

/**
 * The billing exporters' cursor and write-ahead outbox: an event per growth of the ledger, the
 * same event until the receiver takes it, refunds netted, one event however many passes race.
 * Runs on every backend.
 */
export function billingContract(t: Test, make: () => Promise<Store>): void {
  t.test(
    'billing: the ledger growth becomes one event, the same one until it is taken, then the next span',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const a = account();
      await store.accounts.createAccount(a);
      const s = periodSpec(a);
      t.same(await store.billing.billingPrepare('stripe', a.id, 'cus_A', TS), [], 'no growth, no event');
      await counted(store, s, 3);
      const [first, ...none] = await store.billing.billingPrepare('stripe', a.id, 'cus_A', TS);
      t.same(none, []);
      t.match(first, { id: idOf('stripe', a.id, '0-3'), from: 0, to: 3, value: 3, subject: 'cus_A', timestamp_ms: TS });
      await counted(store, s, 2);
      t.same(
        await store.billing.billingPrepare('stripe', a.id, 'cus_A', TS + 1000),
        [first],
        'while one is outstanding the growth waits, and the event is unchanged',
      );
      await store.billing.billingAck(first as never);
      const [second] = await store.billing.billingPrepare('stripe', a.id, 'cus_A', TS + 2000);
      t.match(second, { id: idOf('stripe', a.id, '3-5'), from: 3, to: 5, value: 2, timestamp_ms: TS + 2000 });
    },
  );

  t.test(
    'billing: growth over several periods is summed, and a refund is netted against the next growth',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const a = account();
      await store.accounts.createAccount(a);
      await counted(store, periodSpec(a, String(START)), 2);
      await counted(store, periodSpec(a, String(START + 1000)), 2);
      const [e] = await store.billing.billingPrepare('ce', a.id, a.id, TS);
      t.match(e, { from: 0, to: 4, value: 4 });
      await store.billing.billingAck(e as never);
      await store.counting.refund(a.id, String(START + 1000), '2026-11-26');
      t.same(await store.billing.billingPrepare('ce', a.id, a.id, TS), [], 'a shrunk ledger sends nothing');
      await counted(store, periodSpec(a, String(START + 1000)), 1);
      t.same(await store.billing.billingPrepare('ce', a.id, a.id, TS), [], 'the refund is made up first');
      await counted(store, periodSpec(a, String(START + 1000)), 2);
      const [next] = await store.billing.billingPrepare('ce', a.id, a.id, TS);
      t.match(next, { from: 4, to: 6, value: 2 }, 'then the growth past it');
    },
  );

  t.test('billing: passes racing over one account write one event, and exporters keep their own cursors', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    await counted(store, periodSpec(a), 7);
    const results = await Promise.all(
      Array.from({ length: 6 }, () => store.billing.billingPrepare('stripe', a.id, 'cus_A', TS)),
    );
    const ids = [...new Set(results.flat().map((e) => e.id))];
    t.equal(ids.length, 1, 'one event');
    t.match(ids[0], idOf('stripe', a.id, '0-7'));
    const [other] = await store.billing.billingPrepare('ce', a.id, a.id, TS);
    t.match(other, { id: idOf('ce', a.id, '0-7'), value: 7 });
  });

  t.test(
    'billing: a deferred event keeps its span; a refused one is listed, retried unchanged, then taken',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const a = account();
      await store.accounts.createAccount(a);
      await counted(store, periodSpec(a), 4);
      const [e] = await store.billing.billingPrepare('stripe', a.id, 'cus_A', TS);
      if (e === undefined) throw new Error('no event');
      await store.billing.billingDefer(e, TS + 60_000, 'status 503');
      const [deferred] = await store.billing.billingPrepare('stripe', a.id, 'cus_A', TS + 5000);
      t.match(deferred, { id: e.id, value: 4, attempts: 1, next_attempt_ms: TS + 60_000, last_error: 'status 503' });
      await store.billing.billingFail(deferred as never, TS + 70_000, 'status 400: bad customer');
      const outstanding = await store.billing.billingOutstanding('stripe');
      const mine = outstanding.filter((x) => x.account_id === a.id);
      t.match(mine, [{ id: e.id, value: 4, failed_at_ms: TS + 70_000, last_error: 'status 400: bad customer' }]);
      await counted(store, periodSpec(a), 1);
      const [after] = await store.billing.billingPrepare('stripe', a.id, 'cus_A', TS + 80_000);
      t.match(after, { from: 4, to: 5 }, 'a failed span is set aside: growth after it is a span of its own');
      t.equal(await store.billing.billingRetry('stripe', e.id), 1);
      t.equal(await store.billing.billingRetry('stripe', e.id), 0, 'retried once');
      const again = (await store.billing.billingOutstanding('stripe')).filter((x) => x.account_id === a.id);
      t.same(
        again.map((x) => [x.id, x.value, x.failed_at_ms]),
        [
          [after?.id, 1, null],
          [e.id, 4, null],
        ],
      );
      for (const x of again) await store.billing.billingAck(x);
      t.same(
        (await store.billing.billingOutstanding('stripe')).filter((x) => x.account_id === a.id),
        [],
        'taken: nothing outstanding',
      );
    },
  );

  t.test("billing: a deleted account's outstanding event is still listed, to be sent", async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    await counted(store, periodSpec(a), 2);
    const [e] = await store.billing.billingPrepare('ce', a.id, a.id, TS);
    await store.accounts.deleteAccount(a.id);
    const listed = (await store.billing.billingOutstanding('ce')).filter((x) => x.account_id === a.id);
    t.same(
      listed.map((x) => x.id),
      [e?.id],
    );
  });
}
