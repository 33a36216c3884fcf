import t from 'tap';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount, STARTER_FIRST_USAGE } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';

const USAGE = '/fuel-api/api/usage.php';
const SIMPLE = '/fuel-api/api/simple-current.php';
const BAD_KEY = `fpg_${'B'.repeat(38)}`;

t.test('usage.php answers the seven usage fields of the metered answers and counts nothing', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { api_key: key, account } = await newAccount(gw, { plan: 'starter' });
  const keys = await fetch(`http://127.0.0.1:${gw.app.adminAddress.port}/admin/accounts/${account.id}/keys`);
  const keyId = ((await keys.json()) as { keys: Array<{ id: string }> }).keys[0]?.id;
  const named = { id: keyId, name: 'default', expires_at: null };
  for (let i = 0; i < 3; i++) {
    const r = await gw.get(USAGE, { headers: { 'X-API-Key': key } });
    t.equal(r.status, 200);
    t.equal(r.headers.get('cache-control'), 'no-store');
    t.equal(r.headers.get('x-ratelimit-remaining'), '2000');
    t.same(await r.json(), {
      success: true,
      usage: { ...STARTER_FIRST_USAGE, requests_used: 0, requests_remaining: 2000 },
      key: named,
    });
  }
  const metered = (await (await gw.get(`${SIMPLE}?api_key=${key}`)).json()) as { usage: unknown };
  t.same(metered.usage, STARTER_FIRST_USAGE, 'the first metered request is still number 1');
  const after = await gw.get(`${USAGE}?api_key=${key}`);
  const text = await after.text();
  t.equal(
    text,
    `{"success":true,"usage":${JSON.stringify(STARTER_FIRST_USAGE)},"key":${JSON.stringify(named)}}`,
    'api_key works too; key order: the key that asked after usage',
  );
  const head = await gw.get(USAGE, { method: 'HEAD', headers: { 'X-API-Key': key } });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), String(text.length));
});

t.test('usage.php shows a used-up allowance as a 200 with zero remaining', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { api_key: key } = await newAccount(gw, { plan: 'starter', limit: 1 });
  t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 200);
  t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 429);
  const r = await gw.get(USAGE, { headers: { 'X-API-Key': key } });
  t.equal(r.status, 200);
  const body = (await r.json()) as { usage: { requests_used: number; requests_remaining: number } };
  t.equal(body.usage.requests_used, 1);
  t.equal(body.usage.requests_remaining, 0);
});

t.test('usage.php refuses missing, invalid and inactive keys with the error table', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { api_key: inactive } = await newAccount(gw, { plan: 'starter', status: 'inactive' });
  const cases: Array<[Record<string, string>, number, string]> = [
    [{}, 401, 'API key is required.'],
    [{ 'X-API-Key': 'not-a-key' }, 401, 'Invalid API key.'],
    [{ 'X-API-Key': BAD_KEY }, 401, 'Invalid API key.'],
    [{ 'X-API-Key': inactive }, 403, 'API key is inactive.'],
  ];
  for (const [headers, status, message] of cases) {
    const r = await gw.get(USAGE, { headers });
    t.equal(r.status, status, message);
    t.same(await r.json(), { success: false, message });
  }
  t.equal((await gw.get(USAGE, { method: 'POST' })).status, 405);
});

t.test('invalid keys on usage.php count towards the invalid-key throttle', async (t) => {
  const gw = await startGateway(
    t,
    { limits: { invalid_key_throttle: { max_attempts: 3, window_s: 60, block_s: 30 } } },
    { clock: new ManualClock(NOW) },
  );
  for (let i = 0; i < 3; i++) t.equal((await gw.get(USAGE, { headers: { 'X-API-Key': BAD_KEY } })).status, 401);
  // A malformed key: a well-formed one may pass the block once a second (errors.test.ts).
  const blocked = await gw.get(USAGE, { headers: { 'X-API-Key': 'not-a-key' } });
  t.equal(blocked.status, 429);
  t.equal(blocked.headers.get('retry-after'), '30');
  t.equal((await gw.get(`${SIMPLE}?api_key=not-a-key`)).status, 429, 'the metered API too');
});

t.test('while Redis is down usage.php answers 503 (usage cannot be known), and the page still serves', async (t) => {
  const redis = await startRedis(t);
  const gw = await startGateway(t, {
    store: { type: 'redis', on_error: 'allow', redis: { url: redis.url, command_timeout_ms: 200 } },
  });
  const key = gw.app.demoKeys['starter'] ?? (await newAccount(gw, { plan: 'starter' }, Date.now())).api_key;
  t.equal((await gw.get(USAGE, { headers: { 'X-API-Key': key } })).status, 200);
  await redis.stop();
  const r = await gw.get(USAGE, { headers: { 'X-API-Key': key } });
  t.equal(r.status, 503);
  t.equal(r.headers.get('retry-after'), '1');
  t.same(await r.json(), {
    success: false,
    message: 'Service temporarily unavailable.',
    ref: r.headers.get('x-request-id'),
  });
  t.equal((await gw.get('/')).status, 200, 'the page needs no store');
});
