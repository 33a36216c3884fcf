import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/raw.js';
import { startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';
import { clientProblems, type FuelsaResult, hasPhp, phpDecode } from './fuelsa-clients.js';

const CURRENT = '/exapi/fuel/current';
const BYYEAR = '/exapi/fuel/byyear/';
const OURS = '/fuel-api/api/current.php';
const USAGE = '/fuel-api/api/usage.php';
// Checked once: every answer is decoded by PHP when it is here.
const PHP = hasPhp();

type Region = Record<'petrol_93' | 'petrol_95' | 'diesel_50ppm' | 'diesel_500ppm', string | null>;
interface OurSet {
  effective_date: string;
  coastal: Region;
  inland: Region;
}

const LOCATION = { coastal: 'Coast', inland: 'Reef' } as const;
const PERCENTAGE: Record<string, string> = { '50': '0.005', '500': '0.05' };
const cents = (rand: string): number => Number(rand.replace('.', ''));

/**
 * The lines fuelsa-decode.php should print for our sets, worked out from our own answers: every
 * price that is not null, in rand as the plugin shows it, on the effective date in either zone.
 */
function expectedLines(sets: OurSet[]): { petrol: string[]; diesel: string[] } {
  const petrol: string[] = [];
  const diesel: string[] = [];
  for (const s of sets) {
    for (const region of ['coastal', 'inland'] as const) {
      const r = s[region];
      const at = `${s.effective_date}|${s.effective_date}`;
      for (const octane of ['93', '95'] as const) {
        const rand = r[`petrol_${octane}`];
        if (rand !== null)
          petrol.push(
            `${s.effective_date}|petrol|${LOCATION[region]}|${octane}|Unleaded|${cents(rand)}|R${rand}|${at}`,
          );
      }
      for (const ppm of ['50', '500'] as const) {
        const rand = r[`diesel_${ppm}ppm`];
        if (rand !== null)
          diesel.push(
            `${s.effective_date}|diesel|${LOCATION[region]}|${ppm}|${PERCENTAGE[ppm]}|${cents(rand)}|R${rand}|${at}`,
          );
      }
    }
  }
  return { petrol, diesel };
}

/** The same lines read from a FuelSA answer in JavaScript, in its order (effective date first, for sorting by set). */
function answerLines(a: FuelsaResult): { petrol: string[]; diesel: string[] } {
  const day = (d: string): string => d.slice(0, 10);
  return {
    petrol: a.petrol.map(
      (i) =>
        `${day(i.date)}|petrol|${i.location}|${i.octane}|${i.type}|${i.value}|R${(i.value / 100).toFixed(2)}|${day(i.date)}|${day(i.date)}`,
    ),
    diesel: a.diesel.map(
      (i) =>
        `${day(i.date)}|diesel|${i.location}|${i.ppm}|${i.percentage}|${i.value}|R${(i.value / 100).toFixed(2)}|${day(i.date)}|${day(i.date)}`,
    ),
  };
}

/** Checks one FuelSA answer against the clients and against our own sets; returns it parsed. */
async function checkAgainst(t: Test, body: string, sets: OurSet[], label: string): Promise<FuelsaResult> {
  t.same(clientProblems(body), [], `${label}: what the .NET client deserializes`);
  const a = JSON.parse(body) as FuelsaResult;
  t.same(Object.keys(a), ['petrol', 'diesel'], `${label}: FuelSA's shape`);
  for (const i of a.petrol) t.same(Object.keys(i).sort(), ['_id', 'date', 'location', 'octane', 'type', 'value']);
  for (const i of a.diesel)
    t.same(Object.keys(i).sort(), ['_id', 'date', 'location', 'percentage', 'ppm', 'sulfates', 'value']);
  for (const i of [...a.petrol, ...a.diesel])
    t.match(i.date, /^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/, 'midnight UTC on the effective date');
  const want = expectedLines(sets);
  const got = answerLines(a);
  t.same(got.petrol, want.petrol, `${label}: petrol to the cent, nulls left out, oldest first`);
  t.same(got.diesel, want.diesel, `${label}: diesel to the cent, nulls left out, oldest first`);
  if (await PHP) {
    const lines = await phpDecode(body);
    const strip = (l: string[]) => l.map((x) => x.slice(11));
    t.same(lines, [...strip(want.petrol), ...strip(want.diesel)], `${label}: decoded by PHP as the PHP client does`);
  } else t.comment('php-cli is not installed: the PHP decoding is not checked');
  return a;
}

async function ourCurrent(gw: TestGateway, key: string): Promise<OurSet> {
  const r = await gw.get(OURS, { headers: { 'X-API-Key': key } });
  const b = (await r.json()) as { effective_date: string; data: Omit<OurSet, 'effective_date'> };
  return { effective_date: b.effective_date, ...b.data };
}

async function ourYear(gw: TestGateway, key: string, year: number): Promise<OurSet[]> {
  const r = await gw.get(`/fuel-api/api/historical.php?from=${year}-01&to=${year}-12`, {
    headers: { 'X-API-Key': key },
  });
  return ((await r.json()) as { results: OurSet[] }).results;
}

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
    const gw = await startGateway(t, { store: { type: 'redis', redis: { url: redis.url } } });
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
    store: { type: 'redis', redis: { url: redis.url } },
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
  await new Promise((r) => setTimeout(r, 50));
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
