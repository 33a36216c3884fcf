import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/raw.js';
import { startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';
import { checkAgainst, ourCurrent, ourYear } from './agreement.js';
import type { FuelsaResult } from './fuelsa-clients.js';

const CURRENT = '/exapi/fuel/current';
const BYYEAR = '/exapi/fuel/byyear/';
const OURS = '/fuel-api/api/current.php';
const USAGE = '/fuel-api/api/usage.php';
const remaining = (r: Response): string | null => r.headers.get('x-ratelimit-remaining');

t.test('current answers what FuelSA clients parse and agrees with current.php to the cent', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['business'] as string;
  const r = await gw.get(CURRENT, { headers: { key } });
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-type'), 'application/json');
  const body = await r.text();
  const set = await ourCurrent(gw, key);
  t.equal(set.effective_date, '2026-09-02');
  const a = await checkAgainst(t, body, [set], 'current');
  for (const d of a.diesel) t.type(d.sulfates, 'string');
  const ids = [...a.petrol, ...a.diesel].map((i) => i._id);
  t.equal(new Set(ids).size, ids.length, 'ids are unique');
});

t.test('a null price has no item, never a 0; cents are exact for any two-decimal price', async (t) => {
  const file = join(t.testdir(), 'prices.json');
  const region = (p93: string | null, d50: string | null) => ({
    petrol_93: p93,
    petrol_95: '999.99',
    diesel_50ppm: d50,
    diesel_500ppm: '0.01',
  });
  const sets = [
    { effective_date: '2026-10-07', coastal: region(null, null), inland: region('21.10', '19.05') },
    { effective_date: '2026-11-04', coastal: region(null, '0.29'), inland: region('1.15', null) },
  ];
  writeFileSync(file, JSON.stringify(sets));
  const gw = await startGateway(t, { prices: { file } }, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['business'] as string;
  const current = await checkAgainst(
    t,
    await (await gw.get(CURRENT, { headers: { key } })).text(),
    [await ourCurrent(gw, key)],
    'current',
  );
  t.equal(current.petrol.length, 3, 'coastal 93 left out');
  t.equal(current.diesel.length, 3, 'inland 50 ppm left out');
  const year = await checkAgainst(
    t,
    await (await gw.get(`${BYYEAR}2026`, { headers: { key } })).text(),
    await ourYear(gw, key, 2026),
    'byyear',
  );
  t.same(
    year.petrol.map((i) => i.value),
    [99999, 2110, 99999, 99999, 115, 99999],
  );
  t.same(
    year.diesel.map((i) => i.value),
    [1, 1905, 1, 29, 1, 1],
  );
  t.notOk(
    [...year.petrol, ...year.diesel].some((i) => i.value === 0),
    'no 0 stands for a missing price',
  );
});

t.test('byyear returns every item of every set of that year, oldest first; other years are empty', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['business'] as string;
  const ids: string[] = [];
  let years = 0;
  for (let year = 2000; year <= 2030; year++) {
    const sets = await ourYear(gw, key, year);
    const r = await gw.get(`${BYYEAR}${year}`, { headers: { key } });
    t.equal(r.status, 200, `${year}`);
    const a = await checkAgainst(t, await r.text(), sets, `byyear/${year}`);
    if (sets.length === 0) t.same(a, { petrol: [], diesel: [] }, `${year}: no sets, empty lists`);
    else years++;
    ids.push(...[...a.petrol, ...a.diesel].map((i) => i._id));
  }
  t.ok(years >= 4, `${years} years of data checked`);
  t.equal(new Set(ids).size, ids.length, `${ids.length} ids, all unique across the years`);
  const again = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const r = await again.get(`${BYYEAR}2025`, { headers: { key: again.app.demoKeys['business'] as string } });
  const a = (await r.json()) as FuelsaResult;
  t.same(
    [...a.petrol, ...a.diesel].map((i) => i._id),
    ids.filter((id) => id.startsWith('2025-')),
    'ids are stable: another gateway gives the same ones',
  );
  for (const bad of ['abcd', '20251', '-2025', '2025.0', '%32025', '']) {
    const b = await gw.get(`${BYYEAR}${bad}`, { headers: { key } });
    t.equal(b.status, 400, `byyear/${bad}`);
    t.same(await b.json(), { success: false, message: 'Invalid year.' });
  }
  t.equal((await gw.get(`${BYYEAR}2025/01`, { headers: { key } })).status, 404);
});

t.test(
  'counted against the same allowance as current.php, key in key, X-API-Key or api_key (Redis store)',
  async (t) => {
    const redis = await startRedis(t);
    const gw = await startGateway(t, { store: redis.store });
    const { api_key: key } = await newAccount(gw, { plan: 'starter', limit: 5 }, Date.now());
    const { api_key: inactive } = await newAccount(gw, { plan: 'starter', status: 'inactive' }, Date.now());
    t.equal(remaining(await gw.get(`${OURS}?api_key=${key}`)), '4');
    const c = await gw.get(CURRENT, { headers: { key } });
    t.equal(c.status, 200);
    t.equal(remaining(c), '3', 'counted with current.php');
    t.match(c.headers.get('ratelimit'), /^"period";r=3;t=\d+$/);
    t.equal(c.headers.get('ratelimit-policy'), '"period";q=5;w=2592000');
    t.equal(remaining(await gw.get(`${BYYEAR}2025`, { headers: { 'X-API-Key': key } })), '2');
    const head = await gw.get(CURRENT, { method: 'HEAD', headers: { key } });
    t.equal(head.status, 200);
    t.equal(remaining(head), '2', 'HEAD is not counted');
    t.equal(remaining(await gw.get(`${CURRENT}?api_key=${key}`)), '1');
    // Refused before counting: a bad year, keys that disagree, a repeated key header.
    t.equal((await gw.get(`${BYYEAR}x`, { headers: { key } })).status, 400);
    const disagree = await gw.get(CURRENT, { headers: { key, 'X-API-Key': inactive } });
    t.equal(disagree.status, 401);
    t.same(await disagree.json(), { success: false, message: 'Invalid API key.' });
    const port = gw.app.publicAddress.port;
    const twice = await rawRequest(
      port,
      `GET ${CURRENT} HTTP/1.1\r\nHost: x\r\nkey: ${key}\r\nKey: ${key}x\r\nConnection: close\r\n\r\n`,
    );
    t.match(twice, /^HTTP\/1\.1 401 /, 'two different key headers are not a key');
    t.equal(remaining(await gw.get(`${BYYEAR}2026`, { headers: { key } })), '0');
    const limited = await gw.get(CURRENT, { headers: { key } });
    t.equal(limited.status, 429);
    t.ok(Number(limited.headers.get('retry-after')) > 0);
    t.equal(remaining(limited), '0');
    t.same(await limited.json(), { success: false, message: 'Monthly API request limit reached.' }, 'our error body');
    t.equal((await gw.get(`${OURS}?api_key=${key}`)).status, 429, 'current.php is used up too');
    const usage = (await (await gw.get(USAGE, { headers: { 'X-API-Key': key } })).json()) as {
      usage: { requests_used: number };
    };
    t.equal(usage.usage.requests_used, 5);
    const missing = await gw.get(CURRENT);
    t.equal(missing.status, 401);
    t.same(await missing.json(), { success: false, message: 'API key is required.' });
    const unknown = await gw.get(`${BYYEAR}2025`, { headers: { key: `fpg_${'Q'.repeat(38)}` } });
    t.equal(unknown.status, 401);
    t.same(await unknown.json(), { success: false, message: 'Invalid API key.' });
    const off = await gw.get(CURRENT, { headers: { key: inactive } });
    t.equal(off.status, 403);
    t.same(await off.json(), { success: false, message: 'API key is inactive.' });
  },
);

t.test('the ETag is current.php’s; If-None-Match answers 304 with the rate fields, not counted', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { api_key: key } = await newAccount(gw, { plan: 'starter' });
  const etag = (await gw.get(OURS, { headers: { 'X-API-Key': key } })).headers.get('etag') as string;
  t.match(etag, /^W\/"/);
  for (const path of [CURRENT, `${BYYEAR}2026`]) {
    const full = await gw.get(path, { headers: { key } });
    t.equal(full.headers.get('etag'), etag, `${path}: the same ETag`);
    const used = remaining(full);
    const cond = await gw.get(path, { headers: { key, 'If-None-Match': etag } });
    t.equal(cond.status, 304, path);
    t.equal(await cond.text(), '');
    t.equal(cond.headers.get('etag'), etag);
    t.equal(remaining(cond), used, `${path}: the 304 carries the rate fields and is not counted`);
    t.match(cond.headers.get('ratelimit'), /^"period";r=\d+;t=\d+$/);
  }
});

t.test('requests to the FuelSA routes raise usage.threshold webhooks like current.php (Redis store)', async (t) => {
  const redis = await startRedis(t);
  const gw = await startGateway(t, {
    store: redis.store,
    webhooks: { allow_private_addresses: true, allow_http: true, poll_interval_ms: 50, retry_delays_ms: [100] },
  });
  const receiver = await startReceiver(t);
  const { body: ep } = await adminCall(gw, 'POST', '/admin/webhooks', {
    url: receiver.url,
    events: ['usage.threshold'],
  });
  const { api_key: key, account } = await newAccount(gw, { plan: 'starter', limit: 5 }, Date.now());
  for (let i = 0; i < 4; i++)
    t.equal((await gw.get(i % 2 ? CURRENT : `${BYYEAR}2025`, { headers: { key } })).status, 200);
  await waitFor('the 80% event', () => receiver.got.length >= 1, 10_000);
  const [got] = receiver.verified(ep.secret);
  t.equal(got?.event.type, 'usage.threshold');
  t.match(got?.event.data, { account_id: account.id, threshold_percent: 80, requests_used: 4, request_limit: 5 });
});

t.test('a key sent in the key header never reaches a log line; browsers may send it (CORS)', async (t) => {
  const gw = await startGateway(
    t,
    { server: { cors_origins: ['https://app.example.com'] } },
    { clock: new ManualClock(NOW) },
  );
  const key = gw.app.demoKeys['developer'] as string;
  await gw.get(CURRENT, { headers: { key } });
  await gw.get(`${BYYEAR}2025`, { headers: { key: `${key}-not-real` } });
  const pre = await gw.get(CURRENT, {
    method: 'OPTIONS',
    headers: {
      Origin: 'https://app.example.com',
      'Access-Control-Request-Method': 'GET',
      'Access-Control-Request-Headers': 'key',
    },
  });
  t.equal(pre.status, 204);
  t.match(pre.headers.get('access-control-allow-headers'), /(^|, )key(,|$)/i, 'the key header is allowed');
  // An access line is written once its answer is sent, which may be after the client has it.
  await waitFor('the three access lines', () => (gw.logs().match(/"msg":"request"/g) ?? []).length >= 3, 2000);
  t.notMatch(gw.logs(), key);
  t.match(gw.logs(), '/exapi/fuel/current');
});

t.test('compat.fuelsa.enabled false: the routes answer 404 and the API document leaves them out', async (t) => {
  const gw = await startGateway(t, { compat: { fuelsa: { enabled: false } } }, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['developer'] as string;
  t.equal((await gw.get(CURRENT, { headers: { key } })).status, 404);
  t.equal((await gw.get(`${BYYEAR}2025`, { headers: { key } })).status, 404);
  const doc = (await (await gw.get('/fuel-api/openapi.json')).json()) as { paths: Record<string, unknown> };
  t.notOk(Object.keys(doc.paths).some((p) => p.startsWith('/exapi/')));
});
