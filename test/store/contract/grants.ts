import type { Test } from 'tap';
import type { ConsumeSpec, Grant, GrantLedger, Store, StoredAccount, StoreEvent } from '../../../src/store/store.js';
import { account, DAY, hashOf, spec, waitFor } from './fixtures.js';

const START = Date.parse('2026-11-23T10:00:00+02:00');
const END = Date.parse('2026-12-23T10:00:00+02:00');
const WIDE: [number, number] = [0, 8e15];

let seq = 0;
const grant = (requests: number, over: Partial<Grant> = {}): Grant => ({
  id: `grant_${process.pid}_${++seq}`,
  requests,
  note: null,
  period_id: String(START),
  period_started_at: '2026-11-23T10:00:00+02:00',
  created_at: '2026-11-24T08:00:00.000Z',
  ...over,
});

const ledger = (over: Partial<GrantLedger> = {}): GrantLedger => ({
  record: { plan: 'starter', kind: 'monthly', startMs: START, endMs: END },
  limit: 2,
  expireAtMs: Date.now() + 60_000,
  dropBeforeMs: 0,
  ...over,
});

const periodSpec = (a: StoredAccount, over: Partial<ConsumeSpec> = {}): ConsumeSpec =>
  spec(a, {
    periodId: String(START),
    limit: 2,
    record: { plan: 'starter', kind: 'monthly', startMs: START, endMs: END },
    ...over,
  });

/**
 * Grants (top-ups) of the accounts concern: on the account record with a new revision and an
 * announcement, and on the period's record, in one atomic step. Runs on every backend.
 */
export function grantsContract(t: Test, make: () => Promise<Store>): void {
  t.test(
    'grants: a grant bumps the revision and is announced; a copy from before it cannot count, the new one counts against the new limit',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const a = account();
      await store.accounts.createAccount(a);
      const before = periodSpec(a);
      await store.counting.consume(before, DAY);
      await store.counting.consume(before, DAY);
      t.same(await store.counting.consume(before, DAY), { kind: 'exhausted', used: 2 }, 'used up');
      const events: StoreEvent[] = [];
      store.coordination.subscribe((e) => events.push(e));
      const g = grant(3, { note: 'extra for launch week' });
      const updated = await store.accounts.addGrant(a.id, g, ledger());
      t.equal(updated?.revision, a.revision + 1, 'the revision is bumped');
      t.same(updated?.grants, [g], 'the grant is on the account');
      t.same((await store.accounts.findByKeyHash(hashOf(a)))?.grants, [g], 'and on the account found by its key');
      await waitFor(() => events.some((e) => e.type === 'account' && e.id === a.id));
      t.same(
        events.find((e) => e.type === 'account'),
        { type: 'account', id: a.id, keyHashes: [hashOf(a)] },
        'announced with its key hash',
      );
      t.same(await store.counting.consume(before, DAY), { kind: 'changed' }, 'the copy from before the grant');
      const after = periodSpec(a, { revision: a.revision + 1, limit: 5 });
      t.same(await store.counting.consume(after, DAY), { kind: 'ok', used: 3 }, 'admitted again');
      await store.counting.consume(after, DAY);
      await store.counting.consume(after, DAY);
      t.same(await store.counting.consume(after, DAY), { kind: 'exhausted', used: 5 }, 'up to the new limit');
    },
  );

  t.test(
    "grants: the period's record counts them, opened by the first grant when no request was counted yet",
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const a = account();
      await store.accounts.createAccount(a);
      await store.accounts.addGrant(a.id, grant(3), ledger());
      let [records] = await store.counting.periodRecords([a.id], ...WIDE);
      t.same(
        records,
        [
          {
            periodId: String(START),
            plan: 'starter',
            kind: 'monthly',
            limit: 2,
            granted: 3,
            startMs: START,
            endMs: END,
            used: 0,
            days: [],
            changes: [],
          },
        ],
        'a record with nothing counted, its limit before grants',
      );
      await store.accounts.addGrant(a.id, grant(4), ledger());
      // Counted from the account's copy after both grants: the effective limit, 2 + 3 + 4.
      await store.counting.consume(periodSpec(a, { revision: 3, limit: 9 }), DAY);
      [records] = await store.counting.periodRecords([a.id], ...WIDE);
      t.equal(records?.[0]?.granted, 7, 'grants add up');
      t.equal(records?.[0]?.limit, 2, 'the limit stays the one before grants');
      t.equal(records?.[0]?.used, 1);
      t.same(records?.[0]?.days, [[DAY, 1]]);
    },
  );

  t.test('grants: on a period whose record a request opened, the record gains them and keeps the rest', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    await store.counting.consume(periodSpec(a), DAY);
    await store.accounts.addGrant(a.id, grant(10), ledger({ limit: 999 }));
    const [records] = await store.counting.periodRecords([a.id], ...WIDE);
    t.equal(records?.length, 1);
    t.equal(records?.[0]?.granted, 10);
    t.equal(records?.[0]?.limit, 2, 'the record opened by the request keeps its limit');
    t.equal(records?.[0]?.used, 1);
  });

  t.test(
    'grants: those of periods that started before the cut are dropped from the account; other fields are untouched',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const a = account({ limit: 50, label: 'keeps me' });
      await store.accounts.createAccount(a);
      const old = grant(1, { period_id: String(START - 40 * 86_400_000) });
      const recent = grant(2, { period_id: String(START - 10 * 86_400_000) });
      await store.accounts.addGrant(
        a.id,
        old,
        ledger({ record: { ...ledger().record, startMs: START - 40 * 86_400_000 } }),
      );
      await store.accounts.addGrant(
        a.id,
        recent,
        ledger({ record: { ...ledger().record, startMs: START - 10 * 86_400_000 } }),
      );
      const now = grant(3);
      const updated = await store.accounts.addGrant(a.id, now, ledger({ dropBeforeMs: START - 20 * 86_400_000 }));
      t.same(updated?.grants, [recent, now], 'oldest first, the old one gone');
      t.same(
        await store.accounts.updateAccount(a.id, { status: 'inactive' }).then((x) => x?.grants),
        [recent, now],
        'an update keeps them',
      );
      const got = await store.accounts.getAccount(a.id);
      t.equal(got?.limit, 50);
      t.equal(got?.label, 'keeps me');
      t.equal(got?.revision, a.revision + 4);
    },
  );

  t.test('grants: many at once are each kept once, and the record counts them all', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const many = Array.from({ length: 25 }, (_, i) => grant(i + 1));
    await Promise.all(many.map((g) => store.accounts.addGrant(a.id, g, ledger())));
    const got = await store.accounts.getAccount(a.id);
    t.same(got?.grants?.map((g) => g.id).sort(), many.map((g) => g.id).sort());
    t.equal(got?.revision, a.revision + 25, 'one revision each');
    const [records] = await store.counting.periodRecords([a.id], ...WIDE);
    t.equal(records?.[0]?.granted, (25 * 26) / 2);
  });

  t.test('grants: an unknown account gets null, and no record is written', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    t.equal(await store.accounts.addGrant('acct_never', grant(5), ledger()), null);
    t.same(await store.counting.periodRecords(['acct_never'], ...WIDE), [[]]);
  });
}
