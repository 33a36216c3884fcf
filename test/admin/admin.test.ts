import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW, STARTER_FIRST_USAGE } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { region } from '../helpers/prices.js';
import { scaled } from '../helpers/wait.js';

const TOKEN = 'admin-test-token';
const SIMPLE = '/fuel-api/api/simple-current.php';

t.test('accounts: create, show with usage, patch, rotate', async (t) => {
  const gw = await startGateway(t, { listen: { admin: { token: TOKEN } } }, { clock: new ManualClock(NOW) });
  const created = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter', label: 'Acme Fleet' }, TOKEN);
  t.equal(created.status, 201);
  t.match(created.body.api_key, /^fpg_[A-Za-z0-9_-]{38}$/);
  t.match(created.body.account, {
    plan: 'starter',
    label: 'Acme Fleet',
    status: 'active',
    limit: null,
    anchor: new Date(NOW).toISOString(),
    revision: 1,
  });
  t.notOk('key_hash' in created.body.account, 'the hash is not shown either');
  const id = created.body.account.id as string;
  const key = created.body.api_key as string;

  await gw.get(`${SIMPLE}?api_key=${key}`);
  const shown = await adminCall(gw, 'GET', `/admin/accounts/${id}`, undefined, TOKEN);
  t.equal(shown.status, 200);
  t.same(shown.body.usage, STARTER_FIRST_USAGE);

  const patched = await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, { plan: 'business', label: 'Acme' }, TOKEN);
  t.equal(patched.status, 200);
  t.match(patched.body.account, { plan: 'business', label: 'Acme', revision: 2 });
  const after = (await (await gw.get(`${SIMPLE}?api_key=${key}`)).json()) as {
    usage: { plan_type: string; requests_used: number; request_limit: number };
  };
  t.match(
    after.usage,
    { plan_type: 'business', requests_used: 2, request_limit: 10000 },
    'a plan change keeps the count and applies at once',
  );

  const off = await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, { status: 'inactive' }, TOKEN);
  t.equal(off.body.account.status, 'inactive');
  t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 403, 'deactivation applies at once');
  await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, { status: 'active' }, TOKEN);

  const rotated = await adminCall(gw, 'POST', `/admin/accounts/${id}/rotate-key`, undefined, TOKEN);
  t.equal(rotated.status, 200);
  t.not(rotated.body.api_key, key);
  t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 401, 'the old key stops at once');
  t.equal((await gw.get(`${SIMPLE}?api_key=${rotated.body.api_key}`)).status, 200);

  const enterprise = await adminCall(
    gw,
    'POST',
    '/admin/accounts',
    { plan: 'enterprise', limit: 50000, anchor: '2026-11-01T00:00:00+02:00' },
    TOKEN,
  );
  t.equal(enterprise.status, 201);
  t.match(enterprise.body.account, { plan: 'enterprise', limit: 50000, anchor: '2026-11-01T00:00:00+02:00' });
});

t.test('admin errors: token, body, unknown account, unknown plan, route and method', async (t) => {
  const gw = await startGateway(t, { listen: { admin: { token: TOKEN } } }, { clock: new ManualClock(NOW) });
  const noToken = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  t.equal(noToken.status, 401);
  t.equal(noToken.headers.get('www-authenticate'), 'Bearer');
  t.equal((await adminCall(gw, 'GET', '/admin/prices', undefined, 'wrong')).status, 401);
  t.equal((await adminCall(gw, 'GET', '/metrics', undefined, 'wrong')).status, 401, 'metrics need the token too');
  const prices = `http://127.0.0.1:${gw.app.adminAddress.port}/admin/prices`;
  for (const scheme of ['bearer', 'BEARER', 'BeArEr'])
    t.equal(
      (await fetch(prices, { headers: { authorization: `${scheme} ${TOKEN}` } })).status,
      200,
      `the scheme in any case (${scheme}, RFC 9110)`,
    );
  for (const wrong of [TOKEN, `Basic ${TOKEN}`, `Bearer${TOKEN}`, `Bearer ${TOKEN}x`])
    t.equal((await fetch(prices, { headers: { authorization: wrong } })).status, 401, `refused: ${wrong}`);

  const badPlan = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'gold' }, TOKEN);
  t.equal(badPlan.status, 400);
  t.match(badPlan.body, { success: false, code: 'BAD_REQUEST', message: /plan: unknown plan "gold"/ });
  const badBody = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter', limit: -1, colour: 'red' }, TOKEN);
  t.equal(badBody.status, 400);
  t.match(badBody.body.message, /limit: /);
  t.match(badBody.body.message, /colour/);
  t.equal(
    (await adminCall(gw, 'POST', '/admin/accounts', { plan: 'enterprise' }, TOKEN)).status,
    400,
    'enterprise needs a limit',
  );
  t.equal(
    (await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter', anchor: 'yesterday' }, TOKEN)).body.code,
    'BAD_REQUEST',
  );
  const notJson = await adminCall(gw, 'POST', '/admin/accounts', undefined, TOKEN, '{plan:');
  t.match(notJson, { status: 400, body: { message: '(body): not valid JSON', problems: ['(body): not valid JSON'] } });
  const big = await adminCall(
    gw,
    'POST',
    '/admin/accounts',
    undefined,
    TOKEN,
    JSON.stringify({ plan: 'starter', label: 'x'.repeat(70_000) }),
  );
  t.equal(big.status, 413);
  const r = await fetch(`http://127.0.0.1:${gw.app.adminAddress.port}/admin/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: 'plan=starter',
  });
  t.equal(r.status, 415);

  t.equal((await adminCall(gw, 'GET', '/admin/accounts/acct_nope', undefined, TOKEN)).status, 404);
  t.equal((await adminCall(gw, 'PATCH', '/admin/accounts/acct_nope', { status: 'inactive' }, TOKEN)).status, 404);
  t.equal((await adminCall(gw, 'POST', '/admin/accounts/acct_nope/rotate-key', undefined, TOKEN)).status, 404);
  const created = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' }, TOKEN);
  const id = created.body.account.id as string;
  t.equal((await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, { plan: 'gold' }, TOKEN)).status, 400);
  t.equal((await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, {}, TOKEN)).status, 400, 'an empty patch');
  t.equal(
    (await adminCall(gw, 'GET', `/admin/accounts/${id}`, undefined, TOKEN)).body.account.revision,
    1,
    'refused patches changed nothing',
  );
  t.equal((await adminCall(gw, 'GET', '/admin/nothing', undefined, TOKEN)).status, 404);
  const wrongMethod = await adminCall(gw, 'PUT', `/admin/accounts/${id}`, undefined, TOKEN);
  t.equal(wrongMethod.status, 405);
  t.equal(wrongMethod.headers.get('allow'), 'GET, PATCH, DELETE');
  t.equal(
    (await adminCall(gw, 'DELETE', '/admin/prices/history', undefined, TOKEN)).headers.get('allow'),
    'GET',
    'history is no date',
  );
});

t.test('prices: publish current and scheduled, refuse bad sets, show and history', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, {}, { clock });
  const scheduled = await adminCall(gw, 'PUT', '/admin/prices', {
    effective_date: '2026-12-02',
    updated_at: '2026-11-30 18:30:00',
    source: 'Department of Mineral and Petroleum Resources',
    coastal: region('24.10'),
    inland: region('24.90'),
  });
  t.equal(scheduled.status, 201);
  t.equal(scheduled.body.status, 'scheduled');
  const view = await adminCall(gw, 'GET', '/admin/prices');
  t.equal(view.body.current.effective_date, '2026-09-02');
  t.same(
    view.body.scheduled.map((s: { effective_date: string }) => s.effective_date),
    ['2026-12-02'],
  );

  const now = await adminCall(gw, 'PUT', '/admin/prices', {
    effective_date: '2026-11-04',
    coastal: region('23.00'),
    inland: region('23.50'),
  });
  t.equal(now.body.status, 'current');
  t.equal(now.body.price_set.updated_at, '2026-11-23 10:00:00', 'updated_at defaults to the publication time, local');
  const served = (await (await gw.get(`${SIMPLE}?api_key=${gw.app.demoKeys['developer']}`)).json()) as {
    effective_date: string;
    fuel_prices: { coastal: { petrol_95: string; price_basis: string } };
  };
  t.equal(served.effective_date, '2026-11-04');
  t.equal(served.fuel_prices.coastal.price_basis, 'official_regional_reference');

  const again = await adminCall(gw, 'PUT', '/admin/prices', {
    effective_date: '2026-11-04',
    coastal: region('23.01'),
    inland: region('23.50'),
  });
  t.equal(again.status, 201);
  const history = await adminCall(gw, 'GET', '/admin/prices/history');
  const nov = history.body.history.filter((s: { effective_date: string }) => s.effective_date === '2026-11-04');
  t.equal(nov.length, 1, 'one set per date: publishing the same date replaces it');
  t.equal(nov[0].coastal.petrol_95, '23.01');
  t.equal(history.body.history.length, 178, 'the shipped 177 (2012-2026) plus the published one');

  const bad = await adminCall(gw, 'PUT', '/admin/prices', {
    effective_date: '2026-11-05',
    coastal: { ...region('23'), petrol_93: 23.1 },
    inland: region('23.50'),
  });
  t.equal(bad.status, 400);
  t.equal(bad.body.code, 'PRICE_SET_INVALID');
  t.match(bad.body.problems.join('\n'), /coastal\.petrol_95: expected a price/);
  t.match(bad.body.problems.join('\n'), /coastal\.petrol_93: /);
  t.equal((await adminCall(gw, 'GET', '/admin/prices')).body.current.coastal.petrol_95, '23.01', 'the snapshot stays');
  t.equal((await adminCall(gw, 'PUT', '/admin/prices', { effective_date: '2026-11-05' })).status, 400);
});

t.test('/metrics is Prometheus text and moves with traffic', async (t) => {
  const gw = await startGateway(
    t,
    { limits: { invalid_key_throttle: { max_attempts: 2 } } },
    { clock: new ManualClock(NOW) },
  );
  const value = (text: string, name: string): number => {
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`${name} `) || (l.startsWith(`${name}{`) && l.includes(name)));
    return line ? Number(line.split(' ').pop()) : 0;
  };
  const sample = (text: string, selector: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(selector));
    return line ? Number(line.slice(selector.length).trim()) : 0;
  };
  const before = (await adminCall(gw, 'GET', '/metrics')).body as string;
  const { api_key } = (await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter', limit: 1 })).body;
  const unused = (await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' })).body.api_key as string;
  await gw.get(`${SIMPLE}?api_key=${api_key}`);
  await gw.get(`${SIMPLE}?api_key=${api_key}`);
  await gw.get(`${SIMPLE}?api_key=fpg_${'Q'.repeat(38)}`);
  await gw.get(`${SIMPLE}?api_key=fpg_${'Q'.repeat(38)}`);
  // The address is now blocked: a malformed key is refused unread.
  await gw.get(`${SIMPLE}?api_key=${unused.slice(0, 10)}`);
  const m = await adminCall(gw, 'GET', '/metrics');
  t.equal(m.status, 200);
  t.match(m.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = m.body as string;
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    // Prometheus parses sample values with Go's ParseFloat, which takes NaN in any case.
    t.match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? (-?[0-9.e+-]+|[Nn][Aa][Nn]|[+-]Inf)$/, 'a valid sample line');
  }
  t.equal(
    sample(text, 'fuel_gateway_requests_total{route="simple-current",status="200"}') -
      sample(before, 'fuel_gateway_requests_total{route="simple-current",status="200"}'),
    1,
  );
  t.equal(sample(text, 'fuel_gateway_requests_total{route="simple-current",status="401"}'), 2);
  t.equal(sample(text, 'fuel_gateway_quota_rejections_total{plan="starter"}'), 1);
  t.equal(
    sample(text, 'fuel_gateway_invalid_key_rejections_total{reason="malformed"}'),
    2,
    'checksum failures never reach the store',
  );
  t.equal(sample(text, 'fuel_gateway_invalid_key_rejections_total{reason="throttled"}'), 1);
  t.equal(sample(text, 'fuel_gateway_request_duration_seconds_count{route="simple-current"}'), 5);
  t.ok(value(text, 'fuel_gateway_account_cache_hit_ratio') > 0);
  t.equal(
    value(text, 'fuel_gateway_price_snapshot_effective_timestamp_seconds'),
    Date.parse('2026-09-02T00:01:00+02:00') / 1000,
  );
  t.equal(
    value(text, 'fuel_gateway_price_snapshot_age_seconds'),
    (NOW - Date.parse('2026-09-02T00:01:00+02:00')) / 1000,
  );
  t.equal(
    sample(text, 'fuel_gateway_store_duration_seconds_count'),
    2,
    'one store call per request that reached the meter',
  );
  t.equal(
    sample(text, 'fuel_gateway_requests_total{route="simple-current",status="429"}'),
    2,
    'one quota, one throttle',
  );
});

t.test('without a token the admin listener refuses a non-loopback address', async (t) => {
  await t.rejects(
    startGateway(t, { listen: { admin: { host: '0.0.0.0', token: '' } } }),
    /listen\.admin\.host: 0\.0\.0\.0 is not loopback: set listen\.admin\.token/,
  );
});

t.test('without a token, only requests addressed to localhost are served (no DNS rebinding)', async (t) => {
  const { rawRequest } = await import('../helpers/raw.js');
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const port = gw.app.adminAddress.port;
  const ask = (host: string) =>
    rawRequest(port, `GET /admin/prices HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  t.match(await ask('attacker.example:8081'), /^HTTP\/1\.1 401 /);
  t.match(await ask('127.0.0.1.attacker.example'), /^HTTP\/1\.1 401 /);
  t.match(await ask(`localhost:${port}`), /^HTTP\/1\.1 200 /);
  t.match(await ask(`127.0.0.1:${port}`), /^HTTP\/1\.1 200 /);
  t.match(await ask(`[::1]:${port}`), /^HTTP\/1\.1 200 /);
});

t.test('changing a converted trial keeps its billing cycle and its count', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(
    t,
    { plans: { developer: { limit: 100, period: 'trial', converts_to: 'starter' } } },
    { clock },
  );
  const created = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'developer', limit: 5 });
  const { id } = created.body.account;
  const key = created.body.api_key as string;
  clock.advanceTo(Date.parse('2026-12-20T12:00:00+02:00'));
  const usage = async () =>
    ((await (await gw.get(`${SIMPLE}?api_key=${key}`)).json()) as { usage: Record<string, unknown> }).usage;
  t.match(
    await usage(),
    { plan_type: 'starter', requests_used: 1, request_limit: 2000, period_started_at: '2026-12-07T10:00:00+02:00' },
    'the trial limit was for the trial',
  );
  const patched = await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, { plan: 'business' });
  t.match(patched.body.account, {
    plan: 'business',
    anchor: new Date(Date.parse('2026-12-07T10:00:00+02:00')).toISOString(),
    limit: null,
  });
  t.match(await usage(), {
    plan_type: 'business',
    requests_used: 2,
    request_limit: 10000,
    period_started_at: '2026-12-07T10:00:00+02:00',
  });
});

t.test('every admin error comes from the one failure table, code and status alike', async (t) => {
  const { FAILURE_STATUS } = await import('../../src/failures.js');
  const token = 'table-token';
  const gw = await startGateway(t, { listen: { admin: { token } } }, { clock: new ManualClock(NOW) });
  const answers = [
    await adminCall(gw, 'GET', '/admin/nothing', undefined, token),
    await adminCall(gw, 'PUT', '/admin/accounts', undefined, token),
    await adminCall(gw, 'GET', '/admin/prices', undefined, 'wrong'),
    await adminCall(gw, 'POST', '/admin/accounts', { plan: 'nope' }, token),
    await adminCall(gw, 'POST', '/admin/accounts', undefined, token, 'not json'),
    await adminCall(gw, 'GET', '/admin/accounts/acct_missing', undefined, token),
  ];
  t.same(
    answers.map((a) => a.status),
    [404, 405, 401, 400, 400, 404],
  );
  for (const a of answers) {
    t.equal(FAILURE_STATUS[a.body.code as keyof typeof FAILURE_STATUS], a.status, `${a.body.code} → ${a.status}`);
    t.equal(a.body.success, false);
  }
});

t.test(
  'admin input: inherited plan names, anchors out of range and impossible dates get 400 naming the field',
  async (t) => {
    const gw = await startGateway(t, { listen: { admin: { token: TOKEN } } }, { clock: new ManualClock(NOW) });
    for (const plan of ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty']) {
      const r = await adminCall(gw, 'POST', '/admin/accounts', { plan, limit: 10 }, TOKEN);
      t.equal(r.status, 400, `plan "${plan}": 400`);
      t.match(r.body.message, /^plan: unknown plan/, 'naming the plan');
    }
    const { account } = (await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' }, TOKEN)).body;
    const patched = await adminCall(gw, 'PATCH', `/admin/accounts/${account.id}`, { plan: 'constructor' }, TOKEN);
    t.equal(patched.status, 400, 'nor by a patch');
    for (const anchor of [
      '0001-01-01T00:00:00Z',
      '1999-12-31T23:59:59Z',
      '9999-12-31T23:59:59Z',
      '2100-01-01T00:00:00Z',
      '2026-02-30T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-04-31T10:00:00+02:00',
      '2026-11-01T24:00:00Z',
      '2026-11-01T10:60:00Z',
      '2026-11-01T10:00:60Z',
      '2026-11-01T10:00:00+25:00',
    ]) {
      const started = Date.now();
      const r = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter', anchor }, TOKEN);
      t.equal(r.status, 400, `anchor ${anchor}: 400`);
      t.match(r.body.message, /^anchor: expected/, 'naming the anchor');
      t.ok(Date.now() - started < scaled(200), 'at once');
      const p = await adminCall(gw, 'PATCH', `/admin/accounts/${account.id}`, { anchor }, TOKEN);
      t.equal(p.status, 400, `patched to ${anchor}: 400`);
    }
    for (const anchor of ['2000-01-01T00:00:00Z', '2024-02-29T10:00:00+02:00', '2099-12-31T23:59:59.999Z']) {
      const r = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter', anchor }, TOKEN);
      t.equal(r.status, 201, `anchor ${anchor}: accepted`);
      t.match(r.body.account.anchor, anchor);
    }
  },
);
