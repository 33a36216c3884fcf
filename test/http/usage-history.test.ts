import t, { type Test } from 'tap';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { sleep, waitFor } from '../helpers/wait.js';

const H = '/fuel-api/api/usage-history.php';
const at = (iso: string): number => Date.parse(iso);

/**
 * A starter account created at NOW (2026-11-23 10:00, cycles from 10:00 on the 23rd): 3 requests
 * on its first day, 2 the next, 1 on 23 Dec before its cycle ends at 10:00 and 1 after, so
 * 23 Dec belongs to two periods.
 */
async function setUp(t: Test) {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, { limits: { invalid_key_throttle: { max_attempts: 3 } } }, { clock });
  const { account, api_key: key } = await newAccount(gw, { plan: 'starter', label: 'Acme, "fuel" Ltd' });
  const auth = { headers: { 'X-API-Key': key } };
  const counted = async (n: number, iso: string) => {
    clock.advanceTo(at(iso));
    for (let i = 0; i < n; i++) t.equal((await gw.get('/fuel-api/api/simple-current.php', auth)).status, 200);
  };
  await counted(3, '2026-11-23T10:00:00+02:00');
  await counted(2, '2026-11-24T09:00:00+02:00');
  await counted(1, '2026-12-23T09:59:00+02:00');
  await counted(1, '2026-12-23T10:30:00+02:00');
  return { gw, clock, account, key, auth };
}

t.test('usage-history answers every day of the range and each period, and counts nothing', async (t) => {
  const { gw, auth } = await setUp(t);
  const r = await gw.get(`${H}?from=2026-11-22&to=2026-12-24`, auth);
  t.equal(r.status, 200);
  const body = (await r.json()) as {
    success: boolean;
    from: string;
    to: string;
    days: Array<{ date: string; requests: number }>;
    periods: Array<Record<string, unknown>>;
  };
  t.equal(body.success, true);
  t.equal(body.from, '2026-11-22');
  t.equal(body.to, '2026-12-24');
  t.equal(body.days.length, 33, 'every day of the range, both ends included');
  const nonZero = body.days.filter((d) => d.requests > 0);
  t.same(nonZero, [
    { date: '2026-11-23', requests: 3 },
    { date: '2026-11-24', requests: 2 },
    { date: '2026-12-23', requests: 2 },
  ]);
  t.same(body.days[0], { date: '2026-11-22', requests: 0 }, 'zeros included');
  t.same(body.periods, [
    {
      plan_type: 'starter',
      requests_used: 6,
      request_limit: 2000,
      requests_remaining: 1994,
      request_period: 'monthly',
      period_started_at: '2026-11-23T10:00:00+02:00',
      period_ends_at: '2026-12-23T10:00:00+02:00',
    },
    {
      plan_type: 'starter',
      requests_used: 1,
      request_limit: 2000,
      requests_remaining: 1999,
      request_period: 'monthly',
      period_started_at: '2026-12-23T10:00:00+02:00',
      period_ends_at: '2027-01-23T10:00:00+02:00',
    },
  ]);
  const usage = (await (await gw.get('/fuel-api/api/usage.php', auth)).json()) as { usage: { requests_used: number } };
  t.equal(usage.usage.requests_used, 1, 'the history itself was not counted');
});

t.test('usage-history shows the period in progress before its first request', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, {}, { clock });
  const { api_key: key } = await newAccount(gw, { plan: 'developer' });
  const body = (await (await gw.get(`${H}?from=2026-11-23&to=2026-11-23&api_key=${key}`)).json()) as {
    days: unknown[];
    periods: Array<{ requests_used: number; request_period: string }>;
  };
  t.same(body.days, [{ date: '2026-11-23', requests: 0 }]);
  t.equal(body.periods.length, 1);
  t.equal(body.periods[0]?.requests_used, 0);
  t.equal(body.periods[0]?.request_period, 'trial');
});

t.test('a bad range is 400 Invalid date range., after the key, and counts nothing', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, { limits: { invalid_key_throttle: { max_attempts: 3 } } }, { clock });
  const { api_key: key } = await newAccount(gw, { plan: 'starter' });
  const auth = { headers: { 'X-API-Key': key } };
  for (const q of [
    '',
    '?from=2026-11-01',
    '?from=2026-13-01&to=2026-11-02',
    '?from=2026-02-30&to=2026-03-02',
    '?from=2026-11-02&to=2026-11-01',
    '?from=2025-10-01&to=2026-11-05',
    '?from=2026-11-01&to=2026-11-02&from=2026-11-01',
    '?from=2026-11-01&to=2026-11-02&to=2026-11-02',
    '?from=26-11-01&to=2026-11-02',
  ]) {
    const r = await gw.get(H + q, auth);
    t.equal(r.status, 400, q);
    t.same(await r.json(), { success: false, message: 'Invalid date range.' }, q);
  }
  t.equal((await gw.get(`${H}?from=2025-10-19&to=2025-10-19`, auth)).status, 200, 'the oldest day within retention');
  t.equal((await gw.get(`${H}?from=2025-10-18&to=2025-10-18`, auth)).status, 400, 'a day before retention');
  t.equal((await gw.get(`${H}?from=2026-11-01&to=2026-11-02`)).status, 401, 'no key');
  const usage = (await (await gw.get('/fuel-api/api/usage.php', auth)).json()) as { usage: { requests_used: number } };
  t.equal(usage.usage.requests_used, 0, 'nothing was counted');
});

t.test(
  'a key scoped to usage reads usage-history, and past the limit (an overage) its periods show 0 remaining, never less',
  async (t) => {
    const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
    const { account, api_key: key } = await newAccount(gw, { plan: 'starter', limit: 2 });
    const patched = await adminCall(gw, 'PATCH', `/admin/accounts/${account.id}`, { overage: { max_percent: 100 } });
    t.equal(patched.status, 200);
    const made = await adminCall(gw, 'POST', `/admin/accounts/${account.id}/keys`, { name: 'u', scopes: ['usage'] });
    t.equal(made.status, 201);
    const usageKey = { headers: { 'X-API-Key': made.body.api_key as string } };
    for (let i = 0; i < 4; i++)
      t.equal((await gw.get(`/fuel-api/api/simple-current.php?api_key=${key}`)).status, 200, `request ${i + 1}`);
    const r = await gw.get(`${H}?from=2026-11-23&to=2026-11-23`, usageKey);
    t.equal(r.status, 200, 'the usage scope is the scope of usage-history');
    const body = (await r.json()) as { periods: Array<Record<string, unknown>> };
    t.same(
      (body.periods ?? []).map((p) => [p['requests_used'], p['request_limit'], p['requests_remaining']]),
      [[4, 2, 0]],
      '4 used of 2: 0 remaining',
    );
    const check = await gw.get('/fuel-api/api/usage.php', usageKey);
    t.equal(check.status, 200, 'and of usage.php');
    t.match(((await check.json()) as { usage: unknown }).usage, {
      requests_used: 4,
      request_limit: 2,
      requests_remaining: 0,
    });
  },
);

t.test('invalid keys on usage-history feed the invalid-key throttle', async (t) => {
  const gw = await startGateway(
    t,
    { limits: { invalid_key_throttle: { max_attempts: 3 } } },
    {
      clock: new ManualClock(NOW),
    },
  );
  const bad = { headers: { 'X-API-Key': `fpg_${'C'.repeat(38)}` } };
  for (let i = 0; i < 3; i++) t.equal((await gw.get(`${H}?from=2026-11-01&to=2026-11-02`, bad)).status, 401);
  t.equal((await gw.get(`${H}?from=2026-11-01&to=2026-11-02`, bad)).status, 429, 'throttled');
});

t.test('the admin exports: daily rows, period rows, csv and json, one account or all', async (t) => {
  const { gw, account } = await setUp(t);
  const other = await newAccount(gw, { plan: 'developer', label: 'other' });
  const days = await adminCall(gw, 'GET', `/admin/usage?from=2026-11-23&to=2026-12-23&account=${account.id}`);
  t.equal(days.status, 200);
  t.match(days.headers.get('content-type'), /^text\/csv/);
  t.equal(
    days.body,
    'account_id,label,plan,date,requests\r\n' +
      `${account.id},"Acme, ""fuel"" Ltd",starter,2026-11-23,3\r\n` +
      `${account.id},"Acme, ""fuel"" Ltd",starter,2026-11-24,2\r\n` +
      `${account.id},"Acme, ""fuel"" Ltd",starter,2026-12-23,2\r\n`,
  );
  const json = await adminCall(gw, 'GET', `/admin/usage?from=2026-11-24&to=2026-11-24&format=json`);
  t.same(json.body, {
    from: '2026-11-24',
    to: '2026-11-24',
    rows: [{ account_id: account.id, label: 'Acme, "fuel" Ltd', plan: 'starter', date: '2026-11-24', requests: 2 }],
  });
  const periods = await adminCall(gw, 'GET', '/admin/usage/periods?from=2026-12-01&to=2026-12-31&format=json');
  t.equal(periods.status, 200);
  const rows = (periods.body as { rows: Array<Record<string, unknown>> }).rows;
  const mine = rows.filter((r) => r['account_id'] === account.id);
  t.same(mine, [
    {
      account_id: account.id,
      label: 'Acme, "fuel" Ltd',
      plan: 'starter',
      period_started_at: '2026-11-23T10:00:00+02:00',
      period_ends_at: '2026-12-23T10:00:00+02:00',
      request_limit: 2000,
      requests_used: 6,
      granted_requests: 0,
      overage_requests: 0,
    },
    {
      account_id: account.id,
      label: 'Acme, "fuel" Ltd',
      plan: 'starter',
      period_started_at: '2026-12-23T10:00:00+02:00',
      period_ends_at: '2027-01-23T10:00:00+02:00',
      request_limit: 2000,
      requests_used: 1,
      granted_requests: 0,
      overage_requests: 0,
    },
  ]);
  t.ok(
    rows.some((r) => r['account_id'] === other.account.id && r['requests_used'] === 0),
    'an account with nothing counted still has its period in progress',
  );
  const csv = await adminCall(gw, 'GET', `/admin/usage/periods?from=2026-11-23&to=2026-11-23&account=${account.id}`);
  t.equal(
    csv.body,
    'account_id,label,plan,period_started_at,period_ends_at,request_limit,requests_used,granted_requests,overage_requests\r\n' +
      `${account.id},"Acme, ""fuel"" Ltd",starter,2026-11-23T10:00:00+02:00,2026-12-23T10:00:00+02:00,2000,6,0,0\r\n`,
  );
});

t.test('a plan change in the middle of a period is on its record', async (t) => {
  const { gw, clock, account, auth } = await setUp(t);
  clock.advanceTo(at('2027-01-02T12:00:00+02:00'));
  t.equal((await adminCall(gw, 'PATCH', `/admin/accounts/${account.id}`, { plan: 'business' })).status, 200);
  t.equal((await gw.get('/fuel-api/api/simple-current.php', auth)).status, 200);
  const periods = await adminCall(
    gw,
    'GET',
    `/admin/usage/periods?from=2027-01-01&to=2027-01-02&format=json&account=${account.id}`,
  );
  t.same(periods.body.rows, [
    {
      account_id: account.id,
      label: 'Acme, "fuel" Ltd',
      plan: 'business',
      period_started_at: '2026-12-23T10:00:00+02:00',
      period_ends_at: '2027-01-23T10:00:00+02:00',
      request_limit: 10000,
      requests_used: 2,
      granted_requests: 0,
      overage_requests: 0,
      plan_changes: [
        { changed_at: '2027-01-02T12:00:00+02:00', plan: 'starter', request_limit: 2000, requests_used: 1 },
      ],
    },
  ]);
});

t.test('admin export: a bad range is 400 Invalid date range., an unknown account 404', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  for (const q of [
    '?from=2026-11-01',
    '?from=2026-11-02&to=2026-11-01',
    '?from=2025-01-01&to=2026-11-01',
    '?from=2026-11-01&to=2026-11-02&to=2026-11-03',
    '?from=2026-11-01&to=2026-11-02&format=csv&format=json',
    '?from=nope&to=2026-11-02',
  ]) {
    for (const path of ['/admin/usage', '/admin/usage/periods']) {
      const r = await adminCall(gw, 'GET', path + q);
      t.equal(r.status, 400, path + q);
      t.equal(r.body.message, 'Invalid date range.', path + q);
    }
  }
  t.equal((await adminCall(gw, 'GET', '/admin/usage?from=2026-11-01&to=2026-11-02&format=xml')).status, 400);
  t.equal((await adminCall(gw, 'GET', '/admin/usage?from=2026-11-01&to=2026-11-02&nope=1')).status, 400);
  t.equal((await adminCall(gw, 'GET', '/admin/usage?from=2026-11-01&to=2026-11-02&account=acct_nope')).status, 404);
  t.equal(
    (await adminCall(gw, 'GET', '/admin/usage/periods?from=2026-11-01&to=2026-11-02&account=acct_nope')).status,
    404,
  );
});

t.test('an export waits for a reader that stops reading, and ends when the reader goes away', async (t) => {
  const { connect } = await import('node:net');
  const gw = await startGateway(t, { demo_accounts: false }, { clock: new ManualClock(NOW) });
  const store = gw.app.store;
  // 2,000 accounts × 30 days: 60,000 rows, about 11 MB, far more than the sockets buffer.
  for (let i = 0; i < 2000; i++) {
    const { account } = await newAccount(gw, { plan: 'starter', label: `customer ${i} ${'x'.repeat(100)}` });
    const spec = { accountId: account.id, revision: account.revision, periodId: 'p', limit: 100, expireAtMs: 8e15 };
    for (let d = 1; d <= 30; d++) await store.counting.consume(spec, `2026-11-${String(d).padStart(2, '0')}`);
  }
  const read = store.counting.periodRecords.bind(store.counting);
  let pages = 0;
  store.counting.periodRecords = (...args) => {
    pages++;
    return read(...args);
  };
  const socket = connect(gw.app.adminAddress.port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  socket.pause();
  socket.write('GET /admin/usage?from=2026-11-01&to=2026-11-30 HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await waitFor('the export to fill the socket', () => pages > 0, 5000);
  // The reader stays idle this long: the time is the setup, during which the export must not run on.
  await sleep(500);
  const held = pages;
  t.ok(held < 10, `a reader that reads nothing holds the export at ${held} of 10 pages`);
  socket.destroy();
  // What is checked is that nothing more happens: only time passing can show it.
  await sleep(300);
  t.ok(pages <= held + 1, 'a reader that went away ends it');
  const whole = await adminCall(gw, 'GET', '/admin/usage?from=2026-11-01&to=2026-11-30');
  t.equal(whole.status, 200, 'the admin API still answers');
  t.equal(
    (whole.body as string).split('\r\n').length,
    60_000 + 2,
    'a header, a row per account and day, the last CRLF',
  );
});
