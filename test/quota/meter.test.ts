import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { createAccount } from '../../src/keys/accounts.js';
import { hashKey } from '../../src/keys/key-generator.js';
import { type AccountEntry, DroppedAccount, type HeldAccount, Meter } from '../../src/quota/meter.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import type { StoredAccount } from '../../src/store/store.js';
import { storedKey } from '../helpers/accounts.js';
import { NOW } from '../helpers/fixtures.js';

/** The real memory store, with key lookups held until the test lets them answer. */
class HeldLookups extends MemoryStore {
  held: Array<() => void> = [];
  usageReads = 0;
  lookups = 0;
  constructor(...args: ConstructorParameters<typeof MemoryStore>) {
    super(...args);
    const accounts = this.accounts;
    const find = accounts.findByKeyHash.bind(accounts);
    accounts.findByKeyHash = async (keyHash: string): Promise<StoredAccount | null> => {
      this.lookups++;
      const answer = await find(keyHash);
      await new Promise<void>((resolve) => this.held.push(resolve));
      return answer;
    };
    const counting = this.counting;
    const usage = counting.usage.bind(counting);
    counting.usage = async (accountId: string, periodId: string): Promise<number> => {
      this.usageReads++;
      return usage(accountId, periodId);
    };
  }
  release(): void {
    for (const r of this.held.splice(0)) r();
  }
}

const config = loadConfig({ env: {} });
const meterFor = (store: MemoryStore, cache = config.limits.account_cache) =>
  new Meter({
    accounts: store.accounts,
    counting: store.counting,
    coordination: store.coordination,
    plans: config.plans,
    zone: config.time_zone,
    now: () => NOW,
    cache,
    retentionMs: 0,
    keyWarningMs: 7 * 86_400_000,
  });
const settle = () => new Promise((r) => setImmediate(r));

t.test('concurrent requests for one uncached key share one lookup', async (t) => {
  const store = new HeldLookups(() => NOW);
  const meter = meterFor(store);
  const { api_key } = await createAccount(
    store.accounts,
    config.plans,
    { plan: 'starter', label: '', status: 'active', limit: null },
    NOW,
  );
  const all = Promise.all([
    meter.consume(hashKey(api_key)),
    meter.consume(hashKey(api_key)),
    meter.consume(hashKey(api_key)),
  ]);
  await settle();
  store.release();
  t.same(
    (await all).map((r) => r.kind),
    ['ok', 'ok', 'ok'],
  );
  t.equal(store.lookups, 1);
});

t.test('a key created while a lookup for it was in flight is not refused afterwards', async (t) => {
  const store = new HeldLookups(() => NOW);
  const meter = meterFor(store);
  const key = 'fpg_raced';
  const early = meter.consume(hashKey(key));
  await settle();
  // The account appears (and is announced) while the lookup that found nothing is still out.
  const account: StoredAccount = {
    id: 'acct_raced',
    status: 'active',
    plan: 'starter',
    limit: null,
    anchor: new Date(NOW).toISOString(),
    label: '',
    created_at: '',
    revision: 1,
    keys: [storedKey({ key_hash: hashKey(key) })],
  };
  await store.accounts.createAccount(account);
  const late = meter.consume(hashKey(key));
  await settle();
  store.release();
  await settle();
  store.release();
  t.equal((await early).kind, 'unknown', 'the request that asked first got the old answer');
  t.equal((await late).kind, 'ok', 'a request after the announcement does its own lookup');
  const again = meter.consume(hashKey(key));
  await settle();
  store.release();
  t.equal((await again).kind, 'ok', 'and "unknown" was not cached');
});

t.test('an account read before a change is announced is not cached', async (t) => {
  const store = new HeldLookups(() => NOW);
  const meter = meterFor(store);
  const { api_key, account } = await createAccount(
    store.accounts,
    config.plans,
    { plan: 'starter', label: '', status: 'active', limit: null },
    NOW,
  );
  const hash = hashKey(api_key);
  const first = meter.identify(hash);
  await settle();
  await store.accounts.updateAccount(account.id, { status: 'inactive' });
  store.release();
  t.equal(await first, 'active', 'the in-flight read predates the change');
  t.equal(meter.knowsActive(hash), false, 'but it was not cached as active');
});

t.test('identify answers without reading usage', async (t) => {
  const store = new HeldLookups(() => NOW);
  const meter = meterFor(store);
  const { api_key } = await createAccount(
    store.accounts,
    config.plans,
    { plan: 'starter', label: '', status: 'active', limit: null },
    NOW,
  );
  const who = meter.identify(hashKey(api_key));
  await settle();
  store.release();
  t.equal(await who, 'active');
  t.equal(await meter.identify(hashKey(api_key)), 'active', 'from the cache');
  t.equal(store.usageReads, 0);
});

t.test('one usage object: the hot path splices exactly what the admin API serialises', async (t) => {
  const { usageFragments, usageJson, usageObject } = await import('../../src/quota/usage.js');
  const { monthlyPeriod } = await import('../../src/quota/period.js');
  const period = monthlyPeriod(
    Date.parse('2026-01-31T09:30:00+02:00'),
    Date.parse('2026-02-10T00:00:00+02:00'),
    'Africa/Johannesburg',
  );
  const allowance = {
    plan: 'star"ter',
    limit: 2000,
    granted: 0,
    period,
    converted: false,
    anchorMs: period.startMs,
    cap: 2000,
    burst: null,
  };
  for (const used of [0, 1, 1999, 2000, 2001]) {
    t.equal(
      usageJson(usageFragments(allowance), used, 2000),
      JSON.stringify(usageObject(allowance, used)),
      `used ${used}`,
    );
  }
});

t.test(
  "an entry dropped for room leaves its key's record a copy that makes the same entry again, with or without the account in the reply",
  async (t) => {
    const store = new MemoryStore(() => NOW, null);
    const meter = meterFor(store, { ...config.limits.account_cache, max_entries: 1 });
    const made = [];
    for (let i = 0; i < 2; i++)
      made.push(
        await createAccount(
          store.accounts,
          config.plans,
          { plan: 'starter', label: '', status: 'active', limit: null },
          NOW,
        ),
      );
    const known = made.map((m) => ({ hash: hashKey(m.api_key), cached: null as HeldAccount | null }));
    const [first, second] = known as [(typeof known)[0], (typeof known)[0]];
    t.equal(await meter.identify(first.hash), 'active');
    const entry = meter.cached(first.hash) as AccountEntry;
    meter.hold(first, entry);
    t.equal(first.cached, entry, 'the record holds the cached entry');
    t.equal(await meter.identify(second.hash), 'active', 'the second account takes the one entry');
    const copy = meter.dropped(first);
    t.ok(copy instanceof DroppedAccount, 'the record keeps a copy of the entry dropped for room');
    const dropped = copy as DroppedAccount;
    t.equal(dropped.idJson, entry.idJson);
    t.equal(dropped.spec, entry.spec, 'the same spec: the store counts from it at its revision');
    const same = (e: AccountEntry) => ({
      usage: [e.usageHead, e.usageMid, e.usageTail],
      policy: e.ratePolicy,
      idJson: e.idJson,
      account: e.account,
      period: [e.allowance.period.id, e.allowance.period.startedAt, e.allowance.period.endsAt],
    });
    const stored = (await store.accounts.findByKeyHash(first.hash)) as StoredAccount;
    const generation = meter.reviving(dropped);
    t.same(same(meter.revived(first, dropped, undefined, generation)), same(entry), 'made again from the copy alone');
    t.equal(first.cached, meter.cached(first.hash), 'and cached again on the record');
    t.same(
      same(meter.revived(first, dropped, stored, generation)),
      same(entry),
      'or from the account the reply carried',
    );
    t.equal(await meter.identify(second.hash), 'active');
    t.ok(meter.dropped(first) instanceof DroppedAccount, 'dropped for room again');
    meter.forget(first.hash, first);
    t.equal(meter.dropped(first), undefined, 'forgotten (the store found it changed): no count from what it kept');
  },
);
