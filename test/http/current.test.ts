import t from 'tap';
import { ManualClock } from '../helpers/clock.js';
import { expectedFull, expectedSimple, NOW, newAccount, STARTER_FIRST_USAGE } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

const SIMPLE = '/fuel-api/api/simple-current.php';
const FULL = '/fuel-api/api/current.php';

const trialUsage = (used: number) =>
  `{"plan_type":"developer","requests_used":${used},"request_limit":100,"requests_remaining":${100 - used},` +
  `"request_period":"trial","period_started_at":"2026-11-23T10:00:00+02:00","period_ends_at":"2026-12-07T10:00:00+02:00"}`;

t.test('both envelopes are byte-for-byte the spec with the shipped prices, and usage counts across them', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['developer'] as string;
  const r1 = await gw.get(`${SIMPLE}?api_key=${key}`);
  t.equal(r1.status, 200);
  t.equal(await r1.text(), expectedSimple(trialUsage(1)));
  const r2 = await gw.get(`${FULL}?api_key=${key}`);
  t.equal(await r2.text(), expectedFull(trialUsage(2)));
  const r3 = await gw.get(SIMPLE, { headers: { 'X-API-Key': key } });
  t.equal(await r3.text(), expectedSimple(trialUsage(3)), 'the X-API-Key header works like the query parameter');
});

t.test('success answers carry the integrator headers', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const r = await gw.get(`${FULL}?api_key=${gw.app.demoKeys['starter']}`);
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-type'), 'application/json');
  t.equal(r.headers.get('cache-control'), 'no-store');
  t.equal(r.headers.get('x-content-type-options'), 'nosniff');
  t.equal(r.headers.get('x-powered-by'), null);
  t.equal(r.headers.get('x-ratelimit-limit'), '2000');
  t.equal(r.headers.get('x-ratelimit-remaining'), '1999');
  // Monthly cycle anchored at creation (23rd, 10:00) ends on 23 Dec.
  t.equal(r.headers.get('x-ratelimit-reset'), String(Date.parse('2026-12-23T10:00:00+02:00') / 1000));
  const body = JSON.parse(await r.text()) as { usage: Record<string, unknown> };
  t.same(body.usage, STARTER_FIRST_USAGE);
});

t.test('HEAD answers like GET without a body and is not counted', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['developer'] as string;
  await gw.get(`${SIMPLE}?api_key=${key}`);
  const head = await gw.get(`${SIMPLE}?api_key=${key}`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(await head.text(), '');
  t.equal(head.headers.get('content-length'), String(Buffer.byteLength(expectedSimple(trialUsage(1)))));
  t.equal(head.headers.get('x-ratelimit-remaining'), '99');
  const unknown = await gw.get(`${SIMPLE}?api_key=fpg_${'A'.repeat(38)}`, { method: 'HEAD' });
  t.equal(unknown.status, 401, 'HEAD is authenticated');
  const next = await gw.get(`${SIMPLE}?api_key=${key}`);
  t.equal(await next.text(), expectedSimple(trialUsage(2)), 'HEAD did not count');
});

t.test('exactly `limit` of 3×limit concurrent requests succeed, each with a distinct count', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { api_key } = await newAccount(gw, { plan: 'starter', limit: 50 });
  const answers = await Promise.all(
    Array.from({ length: 150 }, (_, i) =>
      gw
        .get(`${i % 2 ? SIMPLE : FULL}?api_key=${api_key}`)
        .then(async (r) => ({ status: r.status, body: await r.text() })),
    ),
  );
  const ok = answers
    .filter((a) => a.status === 200)
    .map((a) => (JSON.parse(a.body) as { usage: { requests_used: number } }).usage.requests_used);
  t.equal(ok.length, 50);
  t.same(
    [...ok].sort((a, b) => a - b),
    Array.from({ length: 50 }, (_, i) => i + 1),
  );
  const refused = answers.filter((a) => a.status !== 200);
  t.ok(
    refused.every(
      (a) => a.status === 429 && a.body === '{"success":false,"message":"Monthly API request limit reached."}',
    ),
  );
});

t.test('the allowance starts afresh when a period boundary is crossed between two requests', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, {}, { clock });
  const { api_key } = await newAccount(gw, { plan: 'developer', limit: 1 });
  t.equal((await gw.get(`${SIMPLE}?api_key=${api_key}`)).status, 200);
  const end = Date.parse('2026-12-07T10:00:00+02:00');
  clock.advanceTo(end - 1);
  const refused = await gw.get(`${SIMPLE}?api_key=${api_key}`);
  t.equal(refused.status, 429);
  t.equal(await refused.text(), '{"success":false,"message":"Trial API request limit reached."}');
  t.equal(refused.headers.get('retry-after'), '1');
  clock.advanceTo(end);
  const again = await gw.get(`${SIMPLE}?api_key=${api_key}`);
  t.equal(again.status, 200);
  const usage = (JSON.parse(await again.text()) as { usage: Record<string, unknown> }).usage;
  t.equal(usage['requests_used'], 1);
  t.equal(usage['period_started_at'], '2026-12-07T10:00:00+02:00');
  t.equal(usage['period_ends_at'], '2026-12-21T10:00:00+02:00');
});

t.test('a trial plan that converts moves to its monthly plan when the trial ends', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(
    t,
    { plans: { developer: { limit: 100, period: 'trial', converts_to: 'starter' } } },
    { clock },
  );
  const { api_key } = await newAccount(gw, { plan: 'developer' });
  clock.advanceTo(Date.parse('2026-12-08T00:00:00+02:00'));
  const r = await gw.get(`${SIMPLE}?api_key=${api_key}`);
  const usage = (JSON.parse(await r.text()) as { usage: Record<string, unknown> }).usage;
  t.same(usage, {
    plan_type: 'starter',
    requests_used: 1,
    request_limit: 2000,
    requests_remaining: 1999,
    request_period: 'monthly',
    period_started_at: '2026-12-07T10:00:00+02:00',
    period_ends_at: '2027-01-07T10:00:00+02:00',
  });
});

t.test('health and readiness answer without a key', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const h = await gw.get('/healthz');
  t.equal(h.status, 200);
  t.same(await h.json(), { status: 'ok' });
  const r = await gw.get('/readyz');
  t.equal(r.status, 200);
  t.same(await r.json(), {
    ready: true,
    store: true,
    prices: true,
    effective_date: '2026-09-02',
    age_days: 82,
    stale: true,
  });
});

t.test('no key ever appears in a log line', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['developer'] as string;
  await gw.get(`${SIMPLE}?api_key=${key}`);
  await gw.get(`${SIMPLE}?x=1&api_key=${key}&y=2`);
  await gw.get(SIMPLE, { headers: { 'x-api-key': key } });
  await gw.get(`${SIMPLE}?api_key=not-a-real-key`);
  await gw.get(`${SIMPLE}?api%5Fkey=${key}`);
  await gw.get(`${SIMPLE}??api_key=${key}`);
  // An access line is written once its answer is sent, which may be after the client has it.
  await waitFor('the six access lines', () => (gw.logs().match(/"msg":"request"/g) ?? []).length >= 6, 2000);
  const logs = gw.logs();
  t.match(logs, /api_key=\[REDACTED\]/);
  t.notMatch(logs, key);
  t.notMatch(logs, 'not-a-real-key');
});
