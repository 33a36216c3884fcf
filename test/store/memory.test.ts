import t from 'tap';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { DAY, hashOf, storedKey } from './contract/fixtures.js';
import { storeContract } from './contract/index.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

storeContract(t, async () => new MemoryStore());

t.test('expired counters start again from zero', async (t) => {
  let now = 1_000;
  const store = new MemoryStore(() => now);
  const a = {
    id: 'a',
    status: 'active' as const,
    plan: 'developer',
    limit: null,
    anchor: '',
    label: '',
    created_at: '',
    revision: 1,
    keys: [storedKey()],
  };
  await store.accounts.createAccount(a);
  await store.counting.consume({ accountId: 'a', revision: 1, periodId: 'p', limit: 1, expireAtMs: 2_000 }, DAY);
  t.same(
    await store.counting.consume({ accountId: 'a', revision: 1, periodId: 'p', limit: 1, expireAtMs: 2_000 }, DAY),
    {
      kind: 'exhausted',
      used: 1,
    },
  );
  now = 2_000;
  t.equal(await store.counting.usage('a', 'p'), 0);
  t.same(
    await store.counting.consume({ accountId: 'a', revision: 1, periodId: 'p', limit: 1, expireAtMs: 3_000 }, DAY),
    {
      kind: 'ok',
      used: 1,
    },
  );
});

t.test('with a file, deletions and many sets at once are written at once: a new store reads them back', async (t) => {
  const { join } = await import('node:path');
  const file = join(tempDir('fpg-mem-'), 'store.json');
  const region = {
    zone: null,
    price_basis: 'official_regional_reference',
    petrol_93: null,
    petrol_95: '21.00',
    diesel_50ppm: '20.00',
    diesel_500ppm: '19.90',
  };
  const set = (date: string) => ({
    effective_date: date,
    updated_at: `${date} 00:01:00`,
    coastal: region,
    inland: region,
  });
  const account = (id: string) => ({
    id,
    status: 'active' as const,
    plan: 'developer',
    limit: null,
    anchor: '',
    label: '',
    created_at: '',
    revision: 1,
    keys: [storedKey({ key_hash: `${'0'.repeat(63)}${id.slice(-1)}` })],
  });
  const first = new MemoryStore(Date.now, file);
  await first.accounts.createAccount(account('acct_1'));
  await first.accounts.createAccount(account('acct_2'));
  await first.prices.putPriceSets([set('2026-01-07'), set('2026-02-04')], false);
  await first.accounts.deleteAccount('acct_1');
  await first.prices.deletePriceSet('2026-01-07');
  // No close(): a crash right after the changes.
  const second = new MemoryStore(Date.now, file);
  t.teardown(() => Promise.all([first.close(), second.close()]));
  t.same(
    (await second.accounts.listAccounts({}, null, 10)).accounts.map((a) => a.id),
    ['acct_2'],
  );
  t.equal(await second.accounts.findByKeyHash(`${'0'.repeat(63)}1`), null);
  t.same(
    (await second.prices.listPriceSets()).map((s) => s.effective_date),
    ['2026-02-04'],
  );
});

t.test("with a file, an endpoint written before who made it was kept reads as the operator's", async (t) => {
  const { writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const file = join(tempDir('fpg-mem-'), 'store.json');
  const secrets = { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', previous_secret: null, previous_until_ms: null };
  const hook = { url: 'https://receiver.example/hook', account_id: null, description: null, ...secrets };
  const old = { id: 'wh_old', events: ['usage.threshold' as const], ...hook, created_at: '2026-11-01T00:00:00.000Z' };
  const webhooks = { endpoints: [old], deliveries: [], seen: [] };
  writeFileSync(file, JSON.stringify({ version: 1, accounts: [], prices: [], counters: [], webhooks }));
  const store = new MemoryStore(Date.now, file);
  t.teardown(() => store.close());
  t.same(await store.events.getEndpoint(old.id), { ...old, created_via: 'operator' });
});

t.test('with a file, counts written after an account or price change carry that change', async (t) => {
  const { readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { storedAccount, consumeSpec } = await import('../helpers/accounts.js');
  const file = join(tempDir('fpg-mem-'), 'store.json');
  const store = new MemoryStore(Date.now, file);
  const a = storedAccount();
  await store.accounts.createAccount(a);
  await store.counting.consume(consumeSpec(a), DAY);
  await store.close(); // counts only: accounts and prices as encoded at the creation
  const reopened = new MemoryStore(Date.now, file);
  await reopened.accounts.updateAccount(a.id, { label: 'renamed' });
  const b = storedAccount();
  await reopened.accounts.createAccount(b);
  await reopened.counting.consume(consumeSpec({ ...a, revision: 2 }), DAY);
  await reopened.counting.consume(consumeSpec(b), DAY);
  await reopened.close();
  const state = JSON.parse(readFileSync(file, 'utf8'));
  t.same(
    state.accounts.map((x: { id: string; label: string }) => [x.id, x.label]),
    [
      [a.id, 'renamed'],
      [b.id, 'test'],
    ],
  );
  t.same(
    state.counters.map((c: { account: string; used: number }) => [c.account, c.used]),
    [
      [a.id, 2],
      [b.id, 1],
    ],
  );
  const third = new MemoryStore(Date.now, file);
  t.equal(await third.counting.usage(a.id, 'p'), 2, 'the file reads back');
  await third.close();
});

t.test('with a file, changes made together share one write and each resolves once it is on disk', async (t) => {
  const { readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { storedAccount } = await import('../helpers/accounts.js');
  const file = join(tempDir('fpg-mem-'), 'store.json');
  const store = new MemoryStore(Date.now, file);
  t.teardown(() => store.close());
  const accounts = Array.from({ length: 200 }, () => storedAccount());
  let writes = 0;
  const texts = new Set<string>();
  // Each settled create must find itself in the file as it is on disk at that moment.
  await Promise.all(
    accounts.map((a) =>
      store.accounts.createAccount(a).then(() => {
        const text = readFileSync(file, 'utf8');
        if (!texts.has(text)) writes++;
        texts.add(text);
        t.ok(text.includes(a.id), `${a.id} is on disk when its create resolves`);
      }),
    ),
  );
  t.ok(writes <= 3, `200 creates at once took ${writes} writes, not 200`);
});

t.test(
  'with a file, a failed write rejects the change; a failed counter flush is reported and tried again',
  async (t) => {
    const { existsSync, rmSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { storedAccount, consumeSpec } = await import('../helpers/accounts.js');
    const dir = join(tempDir('fpg-mem-'), 'state');
    const errors: unknown[] = [];
    const store = new MemoryStore(Date.now, join(dir, 'store.json'), (err) => errors.push(err));
    const a = storedAccount();
    await store.accounts.createAccount(a);
    // The folder becomes a plain file: every write from now on fails.
    rmSync(dir, { recursive: true });
    writeFileSync(dir, 'not a folder');
    await t.rejects(store.accounts.createAccount(storedAccount()), 'the change is not confirmed');
    await store.counting.consume(consumeSpec(a), DAY);
    // The store's own flush timer (a second) writes the count: wait for its effect, not for the second.
    await waitFor('a counter flush to fail', () => errors.length >= 1, 1200);
    t.ok(errors.length >= 1, 'the failed flush was reported');
    // The folder is back: the next flush writes the count that failed before.
    rmSync(dir);
    await waitFor('a later counter flush to write the file', () => existsSync(join(dir, 'store.json')), 1200);
    const reopened = new MemoryStore(Date.now, join(dir, 'store.json'));
    t.equal(await reopened.counting.usage(a.id, 'p'), 1, 'the count reached the disk on a later flush');
    await reopened.close();
    await store.close();
  },
);

t.test('with a file, the ledger (days, records, plan changes) survives a restart', async (t) => {
  const { join } = await import('node:path');
  const { storedAccount, consumeSpec } = await import('../helpers/accounts.js');
  const file = join(tempDir('fpg-mem-'), 'store.json');
  const store = new MemoryStore(Date.now, file);
  const a = storedAccount();
  await store.accounts.createAccount(a);
  const spec = {
    ...consumeSpec(a),
    record: { plan: 'starter', kind: 'monthly' as const, startMs: 1_000, endMs: 2_000 },
  };
  await store.counting.consume(spec, '2026-11-24');
  await store.counting.consume(spec, '2026-11-25');
  await store.counting.consume(spec, '2026-11-25');
  await store.counting.refund(a.id, spec.periodId, '2026-11-24');
  await store.counting.recordPlanChange(a.id, spec.periodId, 1_500, { plan: 'business', limit: 10_000, endMs: 2_000 });
  const before = await store.counting.periodRecords([a.id], 0, 3_000);
  await store.close();
  const reopened = new MemoryStore(Date.now, file);
  t.teardown(() => reopened.close());
  const after = await reopened.counting.periodRecords([a.id], 0, 3_000);
  t.same(after, before);
  t.same(after[0]?.[0]?.days, [['2026-11-25', 2]]);
  t.equal(after[0]?.[0]?.plan, 'business');
  t.equal(after[0]?.[0]?.changes.length, 1);
});

t.test(
  'with a file, grants and a deleted account kept for its records are on disk at once: a new store reads them',
  async (t) => {
    const { join } = await import('node:path');
    const { storedAccount, consumeSpec } = await import('../helpers/accounts.js');
    const file = join(tempDir('fpg-mem-'), 'store.json');
    const first = new MemoryStore(Date.now, file);
    const a = storedAccount();
    const gone = storedAccount();
    await first.accounts.createAccount(a);
    await first.accounts.createAccount(gone);
    const record = { plan: 'starter', kind: 'monthly' as const, startMs: 1_000, endMs: 2_000 };
    const grant = {
      id: 'grant_0123456789abcdef',
      requests: 7,
      note: 'top-up',
      period_id: consumeSpec(a).periodId,
      period_started_at: '2026-11-23T10:00:00+02:00',
      created_at: '2026-11-24T08:00:00.000Z',
    };
    await first.accounts.addGrant(a.id, grant, {
      record,
      limit: 3,
      expireAtMs: Date.now() + 60_000,
      dropBeforeMs: 0,
    });
    await first.counting.consume({ ...consumeSpec(gone), record }, '2026-11-24');
    await first.accounts.deleteAccount(gone.id);
    // No close(): the grant and the delete are on disk when they resolve.
    const second = new MemoryStore(Date.now, file);
    t.teardown(() => Promise.all([first.close(), second.close()]));
    t.same((await second.accounts.getAccount(a.id))?.grants, [grant]);
    t.equal((await second.counting.periodRecords([a.id], 0, 3_000))[0]?.[0]?.granted, 7);
    t.same(await second.accounts.getDeletedAccount(gone.id), gone);
    t.equal(await second.accounts.findByKeyHash(hashOf(gone)), null);
  },
);

t.test('portal members survive a restart through the state file; sessions do not', async (t) => {
  const file = `${tempDir('fpg-portal-')}/store.json`;
  const life = { idleMs: 60_000, absoluteMs: 600_000 };
  const first = new MemoryStore(Date.now, file);
  const member = { account_id: 'acct_1', email: 'a@example.test', role: 'owner' as const, added_at: 'now' };
  await first.portal.addMember(member);
  await first.portal.startSession('h', { email: member.email, account_id: 'acct_1', csrf_token: 'c' }, life);
  await first.close();
  const second = new MemoryStore(Date.now, file);
  t.teardown(() => second.close());
  t.same(await second.portal.members('acct_1'), [member]);
  t.same(await second.portal.memberships(member.email), [member]);
  t.equal(await second.portal.useSession('h', life), null, 'a restart signs everyone out');
});

t.test('passkeys survive a restart through the state file, with their counter and last use', async (t) => {
  const file = `${tempDir('fpg-passkeys-')}/store.json`;
  const first = new MemoryStore(Date.now, file);
  const passkey = {
    id: 'cred_1',
    email: 'a@example.test',
    public_key: 'pk',
    counter: 0,
    transports: ['internal'],
    name: 'laptop',
    created_at: '2026-11-29T05:00:00Z',
  };
  await first.portal.addPasskey(passkey);
  await first.portal.usePasskey('cred_1', 5, '2026-11-29T06:00:00Z');
  await first.close();
  const second = new MemoryStore(Date.now, file);
  t.teardown(() => second.close());
  t.same(await second.portal.passkeys(passkey.email), [
    { ...passkey, counter: 5, last_used_at: '2026-11-29T06:00:00Z' },
  ]);
  t.equal(await second.portal.usePasskey('cred_1', 5, '2026-11-29T07:00:00Z'), false, 'the counter read back holds');
});

t.test("with a file, the portal's members, their last sign-in and the sign-ups waiting are read back", async (t) => {
  const { join } = await import('node:path');
  const file = join(tempDir('fpg-mem-'), 'store.json');
  const first = new MemoryStore(Date.now, file);
  const owner = {
    account_id: 'acct_1',
    email: 'a@example.test',
    role: 'owner' as const,
    added_at: '2026-11-29T05:00:00Z',
  };
  await first.portal.addMember(owner);
  await first.portal.markSignIn('acct_1', owner.email, '2026-11-29T06:00:00Z');
  const waiting = { id: 'signup_1', email: 'b@example.test', requested_at: '2026-11-29T06:00:00Z' };
  await first.portal.addSignUp(waiting);
  await first.portal.addSignUp({ ...waiting, id: 'signup_2', email: 'c@example.test' });
  await first.portal.takeSignUp('signup_2');
  const second = new MemoryStore(Date.now, file);
  t.teardown(() => Promise.all([first.close(), second.close()]));
  t.same(await second.portal.members('acct_1'), [{ ...owner, last_sign_in_at: '2026-11-29T06:00:00Z' }]);
  t.same(await second.portal.signUps(), [waiting], 'the one still waiting');
});
