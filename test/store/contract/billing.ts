import type { Test } from 'tap';
import type { BillingEvent } from '../../../src/store/billing/interface.js';
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

/**
 * The event with the tag drawn when it was written (random) taken off its id, once the id is seen
 * to be exactly the span's and a tag: what is left is compared whole with `event`.
 */
function untagged<E extends BillingEvent | undefined>(e: E): E {
  if (e === undefined) return e;
  const m = /^(fpg\.[^.]+\.[^.]+\.\d+-\d+)\.[0-9a-f]{10}$/.exec(e.id);
  return m ? { ...e, id: m[1] } : e;
}

/**
 * The whole event for the span `from`-`to`, every field exact: an id or a subject with anything
 * appended is another event to a receiver, so events are compared with t.same, never t.match.
 */
const event = (
  exporter: string,
  a: StoredAccount,
  subject: string,
  [from, to]: [number, number],
  timestampMs: number,
  over: Partial<BillingEvent> = {},
): BillingEvent => ({
  id: `fpg.${exporter}.${a.id}.${from}-${to}`,
  exporter,
  account_id: a.id,
  subject,
  from,
  to,
  value: to - from,
  timestamp_ms: timestampMs,
  attempts: 0,
  next_attempt_ms: 0,
  last_error: null,
  failed_at_ms: null,
  ...over,
});

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
      t.same(untagged(first), event('stripe', a, 'cus_A', [0, 3], TS));
      await counted(store, s, 2);
      t.same(
        await store.billing.billingPrepare('stripe', a.id, 'cus_A', TS + 1000),
        [first],
        'while one is outstanding the growth waits, and the event is unchanged',
      );
      await store.billing.billingAck(first as never);
      const [second] = await store.billing.billingPrepare('stripe', a.id, 'cus_A', TS + 2000);
      t.same(untagged(second), event('stripe', a, 'cus_A', [3, 5], TS + 2000));
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
      t.same(untagged(e), event('ce', a, a.id, [0, 4], TS));
      await store.billing.billingAck(e as never);
      await store.counting.refund(a.id, String(START + 1000), '2026-11-26');
      t.same(await store.billing.billingPrepare('ce', a.id, a.id, TS), [], 'a shrunk ledger sends nothing');
      await counted(store, periodSpec(a, String(START + 1000)), 1);
      t.same(await store.billing.billingPrepare('ce', a.id, a.id, TS), [], 'the refund is made up first');
      await counted(store, periodSpec(a, String(START + 1000)), 2);
      const [next] = await store.billing.billingPrepare('ce', a.id, a.id, TS);
      t.same(untagged(next), event('ce', a, a.id, [4, 6], TS), 'then the growth past it');
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
    t.same(untagged(other), event('ce', a, a.id, [0, 7], TS));
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
      t.same(
        untagged(deferred),
        event('stripe', a, 'cus_A', [0, 4], TS, {
          attempts: 1,
          next_attempt_ms: TS + 60_000,
          last_error: 'status 503',
        }),
      );
      await store.billing.billingFail(deferred as never, TS + 70_000, 'status 400: bad customer');
      const outstanding = await store.billing.billingOutstanding('stripe');
      const mine = outstanding.filter((x) => x.account_id === a.id);
      t.same(mine.map(untagged), [
        event('stripe', a, 'cus_A', [0, 4], TS, {
          attempts: 2,
          next_attempt_ms: TS + 60_000,
          last_error: 'status 400: bad customer',
          failed_at_ms: TS + 70_000,
        }),
      ]);
      await counted(store, periodSpec(a), 1);
      const [after] = await store.billing.billingPrepare('stripe', a.id, 'cus_A', TS + 80_000);
      t.same(
        untagged(after),
        event('stripe', a, 'cus_A', [4, 5], TS + 80_000),
        'a failed span is set aside: growth after it is a span of its own',
      );
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
