import t, { type Test } from 'tap';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { scaled, waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const START = '2026-11-23T10:00:00+02:00';
const NEXT = '2026-12-23T10:00:00+02:00';

interface Usage {
  requests_used: number;
  request_limit: number;
  requests_remaining: number;
  period_started_at: string;
}

async function usageOf(gw: TestGateway, key: string): Promise<{ status: number; usage?: Usage; limit: string | null }> {
  const r = await gw.get(SIMPLE, { headers: { 'X-API-Key': key } });
  const body = (await r.json()) as { usage?: Usage };
  return { status: r.status, usage: body.usage, limit: r.headers.get('x-ratelimit-limit') };
}

/** A starter account with its own limit of 3, created at NOW on a gateway with a manual clock. */
async function setUp(t: Test) {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, { demo_accounts: false }, { clock });
  const { account, api_key: key } = await newAccount(gw, { plan: 'starter', limit: 3, label: 'Top-up Ltd' });
  return { clock, gw, account, key };
}

t.test(
  'a grant readmits a used-up account on its next request: request_limit is the limit plus the grants, remaining follows',
  async (t) => {
    const { gw, account, key } = await setUp(t);
    for (let i = 0; i < 3; i++) t.equal((await usageOf(gw, key)).status, 200);
    t.equal((await usageOf(gw, key)).status, 429, 'used up');

    const posted = await adminCall(gw, 'POST', `/admin/accounts/${account.id}/grants`, {
      requests: 2,
      note: 'launch week',
    });
    t.equal(posted.status, 201);
    t.same(Object.keys(posted.body), ['grant']);
    t.same(Object.keys(posted.body.grant), ['id', 'requests', 'note', 'period_started_at', 'created_at']);
    t.match(posted.body.grant, {
      id: /^grant_[0-9a-f]{16}$/,
      requests: 2,
      note: 'launch week',
      period_started_at: START,
      created_at: new Date(NOW).toISOString(),
    });

    const next = await usageOf(gw, key);
    t.equal(next.status, 200, 'admitted on the very next request');
    t.match(next.usage, { requests_used: 4, request_limit: 5, requests_remaining: 1 });
    t.equal(next.limit, '5', 'X-RateLimit-Limit carries the new total');
    t.equal((await usageOf(gw, key)).status, 200);
    t.equal((await usageOf(gw, key)).status, 429, 'up to the limit plus the grant, not further');

    const second = await adminCall(gw, 'POST', `/admin/accounts/${account.id}/grants`, { requests: 10 });
    t.equal(second.body.grant.note, null, 'a grant without a note has null');
    const shown = await adminCall(gw, 'GET', `/admin/accounts/${account.id}`);
    t.match(shown.body.usage, { requests_used: 5, request_limit: 15, requests_remaining: 10 });
    t.notOk('grants' in shown.body.account, 'the account object is as before');
    const history = await gw.get('/fuel-api/api/usage-history.php?from=2026-11-23&to=2026-11-23', {
      headers: { 'X-API-Key': key },
    });
    t.match(((await history.json()) as { periods: Usage[] }).periods, [
      { requests_used: 5, request_limit: 15, requests_remaining: 10, period_started_at: START },
    ]);
    const listed = await adminCall(gw, 'GET', `/admin/accounts/${account.id}/grants`);
    t.equal(listed.status, 200);
    t.same(listed.body, { grants: [posted.body.grant, second.body.grant] }, 'oldest first, each with its period');
    const audit = gw
      .logs()
      .split('\n')
      .filter((l) => l.includes('account.grant'));
    t.equal(audit.length, 2, 'one audit line per grant');
    t.match(JSON.parse(audit[0] as string).audit, {
      action: 'account.grant',
      account_id: account.id,
      after: { id: posted.body.grant.id, requests: 2, note: 'launch week', period_started_at: START },
    });
  },
);

t.test('a grant ends with its period; the period export carries granted_requests and overage_requests', async (t) => {
  const { clock, gw, account, key } = await setUp(t);
  await adminCall(gw, 'POST', `/admin/accounts/${account.id}/grants`, { requests: 2 });
  for (let i = 0; i < 5; i++) t.equal((await usageOf(gw, key)).status, 200);
  clock.advanceTo(Date.parse(NEXT));
  const next = await usageOf(gw, key);
  t.match(next.usage, { requests_used: 1, request_limit: 3, period_started_at: NEXT }, 'back to the limit');
  const listed = await adminCall(gw, 'GET', `/admin/accounts/${account.id}/grants`);
  t.equal(listed.body.grants[0].period_started_at, START, 'still listed, with the period it belonged to');

  // In the next period: 3 counted, 1 granted and counted, then the limit lowered to 1: of the 4
  // counted, 2 are past the period's limit plus its grants.
  t.equal((await usageOf(gw, key)).status, 200);
  t.equal((await usageOf(gw, key)).status, 200);
  await adminCall(gw, 'POST', `/admin/accounts/${account.id}/grants`, { requests: 1 });
  t.equal((await usageOf(gw, key)).status, 200);
  t.equal((await adminCall(gw, 'PATCH', `/admin/accounts/${account.id}`, { limit: 1, label: 'x' })).status, 200);
  const json = await adminCall(gw, 'GET', '/admin/usage/periods?from=2026-11-23&to=2026-12-23&format=json');
  t.same(
    json.body.rows.map((r: Record<string, unknown>) => [
      r['period_started_at'],
      r['request_limit'],
      r['requests_used'],
      r['granted_requests'],
      r['overage_requests'],
    ]),
    [
      [START, 3, 5, 2, 0],
      [NEXT, 1, 4, 1, 2],
    ],
  );
  const csv = await adminCall(gw, 'GET', '/admin/usage/periods?from=2026-11-23&to=2026-11-23');
  t.equal(
    csv.body,
    'account_id,label,plan,period_started_at,period_ends_at,request_limit,requests_used,granted_requests,overage_requests\r\n' +
      `${account.id},x,starter,${START},${NEXT},3,5,2,0\r\n`,
    'the seven columns as before, then the two new ones',
  );
});

t.test(
  "after a mid-period plan change the period CSV's overage_requests holds the earlier plan's overage",
  async (t) => {
    const { gw, account, key } = await setUp(t);
    // Starter with its own limit of 3 and 100% overage: 6 admitted, 3 of them past the limit.
    const patch = (body: object) => adminCall(gw, 'PATCH', `/admin/accounts/${account.id}`, body);
    t.equal((await patch({ overage: { max_percent: 100 } })).status, 200);
    for (let i = 0; i < 5; i++) t.equal((await usageOf(gw, key)).status, 200);
    // Upgraded mid-period: business' 10,000 from now on, the count goes on.
    t.equal((await patch({ plan: 'business' })).status, 200);
    t.equal((await usageOf(gw, key)).status, 200);
    const csv = await adminCall(gw, 'GET', '/admin/usage/periods?from=2026-11-23&to=2026-11-23');
    t.equal(
      csv.body,
      'account_id,label,plan,period_started_at,period_ends_at,request_limit,requests_used,granted_requests,overage_requests\r\n' +
        `${account.id},Top-up Ltd,business,${START},${NEXT},10000,6,0,2\r\n`,
      "the 2 requests past starter's 3, counted before the change",
    );
    const json = await adminCall(gw, 'GET', '/admin/usage/periods?from=2026-11-23&to=2026-11-23&format=json');
    t.match(json.body.rows, [
      { overage_requests: 2, plan_changes: [{ plan: 'starter', request_limit: 3, requests_used: 5 }] },
    ]);
  },
);

t.test(
  'grant input is checked at the edge: each bad field is a 400, an unknown account 404, nothing granted',
  async (t) => {
    const { gw, account } = await setUp(t);
    const path = `/admin/accounts/${account.id}/grants`;
    for (const body of [
      {},
      { requests: 0 },
      { requests: -5 },
      { requests: 1.5 },
      { requests: '5' },
      { requests: 1_000_000_001 },
      { requests: 5, note: 'bell\u0007' },
      { requests: 5, note: 'x'.repeat(201) },
      { requests: 5, extra: true },
    ]) {
      const r = await adminCall(gw, 'POST', path, body);
      t.equal(r.status, 400, JSON.stringify(body));
      t.ok(r.body.problems.length > 0, 'says which field');
    }
    t.equal((await adminCall(gw, 'POST', path, undefined, undefined, '{"requests":')).status, 400, 'not JSON');
    t.equal((await adminCall(gw, 'POST', '/admin/accounts/acct_nope/grants', { requests: 5 })).status, 404);
    t.equal((await adminCall(gw, 'GET', '/admin/accounts/acct_nope/grants')).status, 404);
    t.equal((await adminCall(gw, 'DELETE', path)).status, 405);
    t.same((await adminCall(gw, 'GET', path)).body, { grants: [] }, 'nothing was granted');
    t.equal((await adminCall(gw, 'GET', `/admin/accounts/${account.id}`)).body.account.revision, 1, 'nor changed');
  },
);

for (const storeName of ['memory', 'redis'] as const) {
  t.test(
    `${storeName} store: thresholds are worked out against the new total, and one already raised is not raised again`,
    async (t) => {
      const store = storeName === 'redis' ? (await startRedis(t)).store : {};
      const gw = await startGateway(t, {
        store,
        demo_accounts: false,
        webhooks: { allow_private_addresses: true, allow_http: true, poll_interval_ms: 50, retry_delays_ms: [100] },
      });
      const receiver = await startReceiver(t);
      const { body: ep } = await adminCall(gw, 'POST', '/admin/webhooks', {
        url: receiver.url,
        events: ['usage.threshold'],
      });
      // Thresholds [80, 100] of 5: at 4 and 5. Granted 5 more: at 8 and 10.
      const { account, api_key: key } = await newAccount(gw, { plan: 'starter', limit: 5 }, Date.now());
      for (let i = 0; i < 4; i++) t.equal((await usageOf(gw, key)).status, 200);
      await waitFor('the 80% event', () => receiver.got.length >= 1);
      await adminCall(gw, 'POST', `/admin/accounts/${account.id}/grants`, { requests: 5 });
      for (let i = 0; i < 6; i++) t.equal((await usageOf(gw, key)).status, 200);
      t.equal((await usageOf(gw, key)).status, 429, 'the new total is 10');
      const hundred = () => receiver.verified(ep.secret).find((g) => g.event.data['threshold_percent'] === 100);
      await waitFor('the 100% event', () => hundred() !== undefined);
      t.match(hundred()?.event.data, { account_id: account.id, requests_used: 10, request_limit: 10 });
      const eighty = receiver.verified(ep.secret).filter((g) => g.event.data['threshold_percent'] === 80);
      t.match(eighty[0]?.event.data, { requests_used: 4, request_limit: 5 }, '80% raised before the grant');
      // Every event enqueued is listed; the 80% of the new total (at 8) would be there before the 100%.
      const listed = await adminCall(gw, 'GET', `/admin/webhooks/${ep.id}/deliveries`);
      t.equal(new Set(listed.body.deliveries.map((d: { event_id: string }) => d.event_id)).size, 2, 'two events');
    },
  );
}

t.test('CSV exports come as a file named by their kind and range, each its own; JSON ones do not', async (t) => {
  const { gw } = await setUp(t);
  for (const [path, name] of [
    ['/admin/usage', 'usage-2026-11-01-2026-11-30.csv'],
    ['/admin/usage/periods', 'usage-periods-2026-11-01-2026-11-30.csv'],
  ] as const) {
    const csv = await adminCall(gw, 'GET', `${path}?from=2026-11-01&to=2026-11-30`);
    t.equal(csv.status, 200);
    t.equal(csv.headers.get('content-disposition'), `attachment; filename="${name}"`, path);
    const json = await adminCall(gw, 'GET', `${path}?from=2026-11-01&to=2026-11-30&format=json`);
    t.equal(json.headers.get('content-disposition'), null, `${path} as JSON`);
  }
});

t.test(
  'deleting an account revokes its key at once and keeps its records, label and plan in the exports',
  async (t) => {
    const { clock, gw, account, key } = await setUp(t);
    const other = await newAccount(gw, { plan: 'business', label: 'Stays' });
    await adminCall(gw, 'POST', `/admin/accounts/${account.id}/grants`, { requests: 4 });
    for (let i = 0; i < 2; i++) t.equal((await usageOf(gw, key)).status, 200);
    clock.advanceTo(Date.parse('2026-11-25T12:00:00+02:00'));
    t.equal((await usageOf(gw, key)).status, 200);
    t.equal((await adminCall(gw, 'DELETE', `/admin/accounts/${account.id}`)).status, 200);
    t.equal((await usageOf(gw, key)).status, 401, 'its key stops at once');
    t.equal((await adminCall(gw, 'GET', `/admin/accounts/${account.id}`)).status, 404);

    clock.advanceTo(Date.parse('2027-01-05T12:00:00+02:00'));
    const range = 'from=2026-11-01&to=2027-01-05';
    const days = await adminCall(gw, 'GET', `/admin/usage?${range}`);
    t.equal(
      days.body,
      'account_id,label,plan,date,requests\r\n' +
        `${account.id},Top-up Ltd,starter,2026-11-23,2\r\n` +
        `${account.id},Top-up Ltd,starter,2026-11-25,1\r\n`,
      'its days, with its label and plan',
    );
    const periods = await adminCall(gw, 'GET', `/admin/usage/periods?${range}&format=json`);
    const mine = periods.body.rows.filter((r: { account_id: string }) => r.account_id === account.id);
    t.same(
      mine,
      [
        {
          account_id: account.id,
          label: 'Top-up Ltd',
          plan: 'starter',
          period_started_at: START,
          period_ends_at: NEXT,
          request_limit: 3,
          requests_used: 3,
          granted_requests: 4,
          overage_requests: 0,
        },
      ],
      'its period, and no period after its deletion',
    );
    t.ok(
      periods.body.rows.some((r: { account_id: string }) => r.account_id === other.account.id),
      'the accounts there are too',
    );
    const one = await adminCall(gw, 'GET', `/admin/usage/periods?${range}&account=${account.id}&format=json`);
    t.same(one.body.rows, mine, 'and asked for by its id');
  },
);

t.test('a grant readmits a used-up account on another gateway sharing the Redis, within a second', async (t) => {
  const redis = await startRedis(t);
  const store = redis.store;
  const a = await startGateway(t, { store, demo_accounts: false });
  const b = await startGateway(t, { store, demo_accounts: false });
  const { account, api_key: key } = await newAccount(a, { plan: 'starter', limit: 2 }, Date.now());
  t.equal((await usageOf(b, key)).status, 200);
  t.equal((await usageOf(a, key)).status, 200);
  t.equal((await usageOf(b, key)).status, 429, 'used up, as gateway B holds it');
  t.equal((await usageOf(a, key)).status, 429, 'and as gateway A does');
  const granted = await adminCall(a, 'POST', `/admin/accounts/${account.id}/grants`, { requests: 1 });
  t.equal(granted.status, 201);
  const since = Date.now();
  const next = await usageOf(b, key);
  const took = Date.now() - since;
  t.equal(next.status, 200, 'the next request on the other gateway is admitted');
  t.match(next.usage, { requests_used: 3, request_limit: 3, requests_remaining: 0 });
  t.ok(took < scaled(1000), `within a second, scaled for a busy machine (${took} ms, bound ${scaled(1000)} ms)`);
  t.equal((await usageOf(a, key)).status, 429, 'one grant, one more request across both');
});

t.test('a grant Redis does not answer in time is a 503, and is then applied whole or not at all', async (t) => {
  const redis = await startRedis(t);
  const gw = await startGateway(t, {
    store: { type: 'redis', redis: { url: redis.url, command_timeout_ms: 300 } },
    demo_accounts: false,
  });
  const { account, api_key: key } = await newAccount(gw, { plan: 'starter', limit: 3 }, Date.now());
  t.equal((await usageOf(gw, key)).status, 200);
  redis.pause();
  const stalled = await adminCall(gw, 'POST', `/admin/accounts/${account.id}/grants`, { requests: 2 });
  redis.resume();
  t.equal(stalled.status, 503, 'the store did not answer in time');
  const grants = await waitFor('the store to answer again', async () => {
    const r = await adminCall(gw, 'GET', `/admin/accounts/${account.id}/grants`);
    return r.status === 200;
  }).then(() => adminCall(gw, 'GET', `/admin/accounts/${account.id}/grants`));
  const n = grants.body.grants.length as number;
  t.ok(n === 0 || n === 1, `at most once (${n})`);
  t.match((await usageOf(gw, key)).usage, { request_limit: 3 + 2 * n }, 'the limit matches the grants');
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const range = `from=${day(Date.now() - 86_400_000)}&to=${day(Date.now() + 86_400_000)}`;
  const rows = await adminCall(gw, 'GET', `/admin/usage/periods?${range}&format=json`);
  t.equal(rows.body.rows[0].granted_requests, 2 * n, 'and so does the record');
});
