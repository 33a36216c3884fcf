import type { Test } from 'tap';
import type { ConsumeSpec, Store, StoredAccount } from '../../../src/store/store.js';
import { account, spec } from './fixtures.js';

const START = Date.parse('2026-11-23T10:00:00+02:00');
const END = Date.parse('2026-12-23T10:00:00+02:00');
const WIDE: [number, number] = [0, 8e15];

const periodSpec = (a: StoredAccount, over: Partial<ConsumeSpec> = {}): ConsumeSpec =>
  spec(a, {
    periodId: String(START),
    limit: 5,
    record: { plan: 'starter', kind: 'monthly', startMs: START, endMs: END },
    ...over,
  });

/**
 * The usage ledger of the counting concern: days counted with the counter, refunds from the day
 * counted on, period records and their plan changes. Runs on every backend.
 */
export function ledgerContract(t: Test, make: () => Promise<Store>): void {
  t.test(
    'ledger: each counted request is in its day, refused ones nowhere, and the days sum to the counter',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const a = account();
      await store.accounts.createAccount(a);
      const s = periodSpec(a, { limit: 4 });
      await store.counting.consume(s, '2026-11-23');
      await store.counting.consume(s, '2026-11-23');
      await store.counting.consume(s, '2026-11-24');
      await store.counting.consume(s, '2026-11-25');
      t.same(await store.counting.consume(s, '2026-11-25'), { kind: 'exhausted', used: 4 });
      const [records] = await store.counting.periodRecords([a.id], ...WIDE);
      t.same(records, [
        {
          periodId: String(START),
          plan: 'starter',
          kind: 'monthly',
          limit: 4,
          granted: 0,
          startMs: START,
          endMs: END,
          used: 4,
          days: [
            ['2026-11-23', 2],
            ['2026-11-24', 1],
            ['2026-11-25', 1],
          ],
          changes: [],
        },
      ]);
    },
  );

  t.test('ledger: a refund takes back from the day counted on, never below zero', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const s = periodSpec(a);
    await store.counting.consume(s, '2026-11-23');
    await store.counting.consume(s, '2026-11-24');
    await store.counting.refund(a.id, String(START), '2026-11-23');
    await store.counting.refund(a.id, String(START), '2026-11-23');
    let [records] = await store.counting.periodRecords([a.id], ...WIDE);
    t.same(records?.[0]?.days, [['2026-11-24', 1]]);
    t.equal(records?.[0]?.used, 0, 'the second refund took the counter to zero');
    await store.counting.refund(a.id, String(START), '2026-11-24');
    [records] = await store.counting.periodRecords([a.id], ...WIDE);
    t.equal(records?.[0]?.used, 0, 'never below zero');
    t.same(records?.[0]?.days, [['2026-11-24', 1]], 'a refund with nothing counted touches no day');
  });

  const daysOf = async (store: Store, a: StoredAccount) => {
    const [records] = await store.counting.periodRecords([a.id], ...WIDE);
    return { used: records?.[0]?.used, days: records?.[0]?.days };
  };

  t.test('ledger: a refund across a day boundary takes from its own day, the others unchanged', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const s = periodSpec(a, { limit: 20 });
    for (const day of ['2026-11-23', '2026-11-23', '2026-11-24', '2026-11-24', '2026-11-24', '2026-11-25'])
      await store.counting.consume(s, day);
    await store.counting.refund(a.id, String(START), '2026-11-23');
    t.same(await daysOf(store, a), {
      used: 5,
      days: [
        ['2026-11-23', 1],
        ['2026-11-24', 3],
        ['2026-11-25', 1],
      ],
    });
    await store.counting.refund(a.id, String(START), '2026-11-24');
    await store.counting.consume(s, '2026-11-25');
    t.same(
      await daysOf(store, a),
      {
        used: 5,
        days: [
          ['2026-11-23', 1],
          ['2026-11-24', 2],
          ['2026-11-25', 2],
        ],
      },
      'the last day counts on after a refund of an earlier one',
    );
  });

  t.test('ledger: a refused first request of a day is nowhere; the first counted one starts the day', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    await store.counting.consume(periodSpec(a, { limit: 2 }), '2026-11-23');
    await store.counting.consume(periodSpec(a, { limit: 2 }), '2026-11-23');
    t.same(await store.counting.consume(periodSpec(a, { limit: 2 }), '2026-11-24'), { kind: 'exhausted', used: 2 });
    t.same(await daysOf(store, a), { used: 2, days: [['2026-11-23', 2]] }, 'the refused one: no day');
    // The same spec again (a gateway notes nothing for it), then with room: a burst limit refuses first.
    const burst = { limit: 1, windowMs: 60_000 };
    t.match(await store.counting.consume(periodSpec(a, { limit: 4, burst }), '2026-11-24'), { kind: 'ok', used: 3 });
    t.match(await store.counting.consume(periodSpec(a, { limit: 4, burst }), '2026-11-25'), { kind: 'burst', used: 3 });
    t.same(await store.counting.consume(periodSpec(a, { limit: 4 }), '2026-11-25'), { kind: 'ok', used: 4 });
    t.same(await daysOf(store, a), {
      used: 4,
      days: [
        ['2026-11-23', 2],
        ['2026-11-24', 1],
        ['2026-11-25', 1],
      ],
    });
  });

  t.test(
    "ledger: a request of 23:59:59.999 that the store runs after another's of 00:00 counts on its day",
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const a = account();
      await store.accounts.createAccount(a);
      const s = periodSpec(a, { limit: 20 });
      await store.counting.consume(s, '2026-11-23');
      await store.counting.consume(s, '2026-11-25');
      await store.counting.consume(s, '2026-11-25');
      // A gateway whose clock is behind: the 24th after the 25th, then the 23rd again.
      await store.counting.consume(s, '2026-11-24');
      await store.counting.consume(s, '2026-11-23');
      await store.counting.consume(s, '2026-11-25');
      await store.counting.consume(s, '2026-11-24');
      t.same(await daysOf(store, a), {
        used: 7,
        days: [
          ['2026-11-23', 2],
          ['2026-11-24', 2],
          ['2026-11-25', 3],
        ],
      });
      await store.counting.refund(a.id, String(START), '2026-11-24');
      await store.counting.refund(a.id, String(START), '2026-11-23');
      await store.counting.consume(s, '2026-11-26');
      t.same(await daysOf(store, a), {
        used: 6,
        days: [
          ['2026-11-23', 1],
          ['2026-11-24', 1],
          ['2026-11-25', 3],
          ['2026-11-26', 1],
        ],
      });
    },
  );

  t.test('ledger: records are found by overlap, oldest first, for each account of a batch', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    const b = account();
    await store.accounts.createAccount(a);
    await store.accounts.createAccount(b);
    const next = { plan: 'business', kind: 'monthly' as const, startMs: END, endMs: END + 31 * 86_400_000 };
    await store.counting.consume(periodSpec(a, { periodId: String(END), record: next }), '2026-12-23');
    await store.counting.consume(periodSpec(a), '2026-11-30');
    const [both, none] = await store.counting.periodRecords([a.id, b.id], START, END + 1);
    t.same(
      both?.map((r) => [r.periodId, r.plan]),
      [
        [String(START), 'starter'],
        [String(END), 'business'],
      ],
    );
    t.same(none, [], 'an account with nothing counted has no records');
    const [early] = await store.counting.periodRecords([a.id], START - 86_400_000, START);
    t.same(early, [], 'a range that ends where a period starts does not overlap it');
    const [late] = await store.counting.periodRecords([a.id], END, END + 1);
    t.same(
      late?.map((r) => r.periodId),
      [String(END)],
    );
  });

  t.test('ledger: a plan change keeps what applied before on the record', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    await store.counting.recordPlanChange(a.id, String(START), START + 1000, { plan: 'x', limit: 1, endMs: END });
    await store.counting.consume(periodSpec(a), '2026-11-23');
    await store.counting.consume(periodSpec(a), '2026-11-23');
    await store.counting.recordPlanChange(a.id, String(START), START + 5000, {
      plan: 'business',
      limit: 10000,
      endMs: END,
    });
    await store.counting.recordPlanChange(a.id, String(START), START + 9000, {
      plan: 'developer',
      limit: 100,
      endMs: START + 9000,
    });
    const [records] = await store.counting.periodRecords([a.id], ...WIDE);
    t.same(records?.[0]?.changes, [
      { atMs: START + 5000, plan: 'starter', limit: 5, used: 2 },
      { atMs: START + 9000, plan: 'business', limit: 10000, used: 2 },
    ]);
    t.equal(records?.[0]?.plan, 'developer');
    t.equal(records?.[0]?.limit, 100);
    t.equal(records?.[0]?.endMs, START + 9000, 'a change that started another period ended this one');
  });
}
