import { readFileSync } from 'node:fs';
import t from 'tap';
import type { StoreEvent } from '../../src/store/store.js';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { region } from '../helpers/prices.js';
import { waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const SHIPPED = JSON.parse(readFileSync('data/prices/sa-fuel-prices-2023-2026.json', 'utf8')) as Array<
  Record<string, unknown>
>;
const set = (date: string, p95 = '24.10') => ({ effective_date: date, coastal: region(p95), inland: region(p95) });
// 401s after a delete must not turn into the invalid-key throttle's 429s.
const NO_THROTTLE = { limits: { invalid_key_throttle: { max_attempts: 1_000_000 } }, demo_accounts: false };

t.test(
  'DELETE /admin/accounts/:id: requests in flight get 200 or 401, the key is refused at once after, a second delete is 404',
  async (t) => {
    const gw = await startGateway(t, NO_THROTTLE, { clock: new ManualClock(NOW) });
    const created = await adminCall(gw, 'POST', '/admin/accounts', {
      plan: 'enterprise',
      limit: 1_000_000,
      label: 'doomed',
    });
    const { id } = created.body.account;
    const key = created.body.api_key as string;
    const kept = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
    t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 200, 'warm in the cache');

    const statuses: number[] = [];
    let deleted = false;
    const after: number[] = [];
    const loader = async () => {
      for (let i = 0; i < 400; i++) {
        const wasDeleted = deleted;
        const status = (await gw.get(`${SIMPLE}?api_key=${key}`)).status;
        (wasDeleted ? after : statuses).push(status);
        if (after.length > 50) return;
      }
    };
    const load = Promise.all([loader(), loader(), loader(), loader()]);
    await waitFor('the load to be under way', () => statuses.length >= 4, 5000);
    const del = await adminCall(gw, 'DELETE', `/admin/accounts/${id}`);
    deleted = true;
    await load;
    t.equal(del.status, 200);
    t.match(del.body.account, { id, label: 'doomed', plan: 'enterprise' });
    t.notOk('key_hash' in del.body.account);
    t.ok(statuses.includes(200), 'some were served before');
    t.same(
      statuses.filter((s) => s !== 200 && s !== 401),
      [],
      'during: only 200 or 401, no 500 or 503',
    );
    t.ok(after.length > 0 && after.every((s) => s === 401), 'every request sent after the delete answered is 401');
    t.equal((await adminCall(gw, 'GET', `/admin/accounts/${id}`)).status, 404);
    const again = await adminCall(gw, 'DELETE', `/admin/accounts/${id}`);
    t.match(again, { status: 404, body: { code: 'NOT_FOUND', message: `no account with id ${id}` } });
    t.equal(
      (await adminCall(gw, 'POST', `/admin/accounts/${id}/rotate-key`)).status,
      404,
      'a deleted account cannot be revived by a rotation',
    );
    t.equal((await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, { status: 'active' })).status, 404);
    t.equal((await adminCall(gw, 'DELETE', '/admin/accounts/acct_never')).status, 404);
    t.same(
      (await adminCall(gw, 'GET', '/admin/accounts')).body.accounts.map((a: { id: string }) => a.id),
      [kept.body.account.id],
    );
    t.equal((await gw.get(`${SIMPLE}?api_key=${kept.body.api_key}`)).status, 200, 'other accounts are untouched');
  },
);

t.test(
  'DELETE /admin/prices/:date cancels a scheduled set; 409 for one in effect, 404 for none, 400 for a bad date',
  async (t) => {
    const clock = new ManualClock(NOW);
    const gw = await startGateway(t, {}, { clock });
    t.equal((await adminCall(gw, 'PUT', '/admin/prices', set('2026-12-02'))).body.status, 'scheduled');
    t.equal((await adminCall(gw, 'PUT', '/admin/prices', set('2027-01-06'))).body.status, 'scheduled');

    const cancelled = await adminCall(gw, 'DELETE', '/admin/prices/2026-12-02');
    t.equal(cancelled.status, 200);
    t.equal(cancelled.body.price_set.effective_date, '2026-12-02');
    t.same(
      (await adminCall(gw, 'GET', '/admin/prices')).body.scheduled.map(
        (s: { effective_date: string }) => s.effective_date,
      ),
      ['2027-01-06'],
    );
    t.match(
      await adminCall(gw, 'DELETE', '/admin/prices/2026-12-02'),
      { status: 404, body: { code: 'NOT_FOUND', message: 'no price set for 2026-12-02' } },
      'twice',
    );
    t.equal((await adminCall(gw, 'DELETE', '/admin/prices/2026-12-09')).status, 404, 'never published');

    const current = await adminCall(gw, 'DELETE', '/admin/prices/2026-09-02');
    t.match(
      current,
      { status: 409, body: { code: 'CONFLICT', message: /already in effect; publish a corrected set/ } },
      'the current set',
    );
    t.equal((await adminCall(gw, 'DELETE', '/admin/prices/2026-08-05')).status, 409, 'a past set');
    for (const bad of ['2026-13-01', '2026-02-30', 'next-week', '2026-1-1', '2026-09-02x']) {
      const r = await adminCall(gw, 'DELETE', `/admin/prices/${bad}`);
      t.equal(r.status, 400, bad);
      t.match(r.body.message, /^date: expected a/, bad);
    }

    // Its time has come, though nothing has been served since: it is in effect, not cancellable.
    clock.ms = Date.parse('2027-01-06T00:01:00+02:00');
    t.equal((await adminCall(gw, 'DELETE', '/admin/prices/2027-01-06')).status, 409, 'at 00:01 on its date');
    t.equal((await adminCall(gw, 'GET', '/admin/prices')).body.current.effective_date, '2027-01-06');
  },
);

t.test('cancelling a set one minute before its time: the switch never happens', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, {}, { clock });
  await adminCall(gw, 'PUT', '/admin/prices', set('2026-12-02'));
  clock.ms = Date.parse('2026-12-02T00:00:00+02:00');
  t.equal((await adminCall(gw, 'DELETE', '/admin/prices/2026-12-02')).status, 200);
  clock.advanceTo(Date.parse('2026-12-02T12:00:00+02:00'));
  const served = (await (await gw.get(`${SIMPLE}?api_key=${gw.app.demoKeys['developer']}`)).json()) as {
    effective_date: string;
  };
  t.equal(served.effective_date, '2026-09-02', 'the set in effect before stays current');
});

t.test(
  'PUT /admin/prices takes the shipped history document: stored in one call, announced once, a status per set',
  async (t) => {
    const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
    const events: StoreEvent[] = [];
    gw.app.store.coordination.subscribe((e) => events.push(e));
    const doc = [...SHIPPED, set('2026-10-07', '25.00'), set('2026-12-02', '26.00')];
    const r = await adminCall(gw, 'PUT', '/admin/prices', doc);
    t.equal(r.status, 201, JSON.stringify(r.body).slice(0, 300));
    t.equal(r.body.published.length, 47);
    t.same(r.body.published.slice(-3), [
      { effective_date: '2026-09-02', status: 'past' },
      { effective_date: '2026-10-07', status: 'current' },
      { effective_date: '2026-12-02', status: 'scheduled' },
    ]);
    t.equal(
      events.filter((e) => e.type === 'prices').length,
      1,
      'one announcement: no intermediate set is ever current',
    );
    const history = (await adminCall(gw, 'GET', '/admin/prices/history')).body.history as Array<{
      effective_date: string;
      updated_at: string;
    }>;
    t.equal(history.length, 178, 'the shipped 177 (2012-2026) plus the published one');
    t.equal(
      history.find((s) => s.effective_date === '2026-10-07')?.updated_at,
      '2026-10-07 00:01:00',
      'as the file is read: its effective time',
    );

    const dup = await adminCall(gw, 'PUT', '/admin/prices', [set('2027-01-06'), set('2027-01-06')]);
    t.match(dup, {
      status: 400,
      body: { code: 'PRICE_SET_INVALID', message: /effective_date 2027-01-06 appears twice/ },
    });
    const bad = await adminCall(gw, 'PUT', '/admin/prices', [
      set('2027-01-06'),
      { ...set('2027-02-03'), coastal: region('26') },
    ]);
    t.equal(bad.status, 400);
    t.match(
      bad.body.message,
      /^1\.coastal\.petrol_95: expected a price/,
      'the set is named by its place in the document',
    );
    t.match(await adminCall(gw, 'PUT', '/admin/prices', []), { status: 400, body: { code: 'PRICE_SET_INVALID' } });
    t.notOk(
      (await adminCall(gw, 'GET', '/admin/prices')).body.scheduled.some(
        (s: { effective_date: string }) => s.effective_date === '2027-01-06',
      ),
      'a refused document stores none of its sets',
    );
  },
);

t.test('every admin change writes one audit line: what, which, from where; never the key or its hash', async (t) => {
  const gw = await startGateway(t, { demo_accounts: false, log: { level: 'warn' } }, { clock: new ManualClock(NOW) });
  const created = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter', label: 'Audited' });
  const { id } = created.body.account;
  const keys = [created.body.api_key as string];
  await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, { status: 'inactive', label: 'Audited 2' });
  keys.push((await adminCall(gw, 'POST', `/admin/accounts/${id}/rotate-key`)).body.api_key as string);
  await adminCall(gw, 'PUT', '/admin/prices', set('2026-12-02'));
  await adminCall(gw, 'PUT', '/admin/prices', [set('2027-01-06'), set('2027-02-03')]);
  await adminCall(gw, 'DELETE', '/admin/prices/2026-12-02');
  await adminCall(gw, 'DELETE', `/admin/accounts/${id}`);
  // Reads and refused changes are not changes.
  await adminCall(gw, 'GET', '/admin/accounts');
  await adminCall(gw, 'DELETE', `/admin/accounts/${id}`);
  await adminCall(gw, 'DELETE', '/admin/prices/2026-09-02');
  await adminCall(gw, 'POST', '/admin/accounts', { plan: 'gold' });

  const lines = gw
    .logs()
    .split('\n')
    .filter((l) => l.includes('"audit"'))
    .map((l) => JSON.parse(l) as { level: number; msg: string; audit: Record<string, unknown> });
  t.same(
    lines.map((l) => l.audit.action),
    [
      'account.create',
      'account.update',
      'account.rotate_key',
      'prices.publish',
      'prices.publish',
      'prices.cancel',
      'account.delete',
    ],
  );
  t.ok(
    lines.every((l) => l.audit.from === '127.0.0.1'),
    'from the admin request address',
  );
  t.ok(
    lines.every((l) => l.level === 30),
    'at info, though log.level is warn',
  );
  t.match(lines[0]?.audit, { account_id: id, after: { plan: 'starter', status: 'active', label: 'Audited' } });
  t.same(
    lines[1]?.audit,
    {
      action: 'account.update',
      account_id: id,
      from: '127.0.0.1',
      before: { status: 'active', label: 'Audited' },
      after: { status: 'inactive', label: 'Audited 2' },
    },
    'enough to undo it',
  );
  t.match(lines[2]?.audit, { account_id: id });
  t.match(lines[3]?.audit, { effective_date: '2026-12-02' });
  t.match(lines[4]?.audit, { effective_dates: ['2027-01-06', '2027-02-03'] });
  t.match(lines[5]?.audit, { effective_date: '2026-12-02' });
  t.match(lines[6]?.audit, { account_id: id, before: { label: 'Audited 2' } });
  const text = lines.map((l) => JSON.stringify(l)).join('\n');
  for (const key of keys) t.notOk(text.includes(key.slice(4, 20)), 'no key');
  t.notMatch(text, /[0-9a-f]{64}|key_hash|api_key/, 'no key hash');
});

t.test(
  'a plan change drops the account’s own limit unless one comes with it; the audit line puts it back',
  async (t) => {
    const gw = await startGateway(t, { demo_accounts: false }, { clock: new ManualClock(NOW) });
    const created = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'enterprise', limit: 1_000_000 });
    const { id } = created.body.account;
    const key = created.body.api_key as string;
    const served = async (): Promise<{ plan_type: string; request_limit: number }> =>
      (
        (await (await gw.get(`${SIMPLE}?api_key=${key}`)).json()) as {
          usage: { plan_type: string; request_limit: number };
        }
      ).usage;
    t.match(await served(), { plan_type: 'enterprise', request_limit: 1_000_000 });

    const down = await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, { plan: 'business' });
    t.match(down.body.account, { plan: 'business', limit: null }, 'the enterprise limit goes with the plan');
    t.match(await served(), { plan_type: 'business', request_limit: 10_000 }, 'the business allowance applies at once');
    const audit = gw
      .logs()
      .split('\n')
      .filter((l) => l.includes('"account.update"'))
      .map((l) => (JSON.parse(l) as { audit: { before: Record<string, unknown> } }).audit);
    t.same(audit[0]?.before, { plan: 'enterprise', limit: 1_000_000 }, 'the audit line has the limit as it was');
    const undone = await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, audit[0]?.before);
    t.match(undone.body.account, { plan: 'enterprise', limit: 1_000_000 }, 'and PATCHing it back undoes the change');

    const given = await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, { plan: 'starter', limit: 5000 });
    t.match(given.body.account, { plan: 'starter', limit: 5000 }, 'a limit given with the change is the new one');
    const same = await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, { plan: 'starter', label: 'same plan' });
    t.match(
      same.body.account,
      { plan: 'starter', limit: 5000 },
      'naming the plan it has is no change: the limit stays',
    );
    const up = await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, { plan: 'enterprise' });
    t.match(up, { status: 400, body: { message: 'limit: plan "enterprise" has no default limit; give one' } });
    t.match((await adminCall(gw, 'GET', `/admin/accounts/${id}`)).body.account, { plan: 'starter', limit: 5000 });
  },
);
