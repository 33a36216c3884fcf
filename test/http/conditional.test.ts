import t from 'tap';
import { noneMatchHits } from '../../src/http/etag.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/raw.js';
import { used } from '../helpers/usage.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const CURRENT = '/fuel-api/api/current.php';
const WEAK = /^W\/"[A-Za-z0-9_-]{27}(-stale)?"$/;

const REGION = {
  zone: null,
  price_basis: 'official_regional_reference',
  petrol_93: '26.00',
  petrol_95: '26.41',
  diesel_50ppm: '28.68',
  diesel_500ppm: '28.20',
};

t.test('If-None-Match is compared weakly: lists, *, W/, whitespace; invalid syntax matches nothing', async (t) => {
  const tag = 'W/"abc"';
  for (const hit of ['W/"abc"', '"abc"', '*', ' * ', '"x", W/"abc"', 'W/"x",,  "abc" ,', '"a,b", "abc"', ', "abc"'])
    t.ok(noneMatchHits(hit, tag), `matches: ${hit}`);
  for (const miss of [
    '',
    'abc',
    'W/"ab"',
    '"abcd"',
    'w/"abc"',
    '"abc" junk',
    '"x", *',
    '*, "abc"',
    '"abc',
    'W/ "abc"',
    '"ab"c"',
    '"x"; "abc"',
  ])
    t.notOk(noneMatchHits(miss, tag), `no match: ${JSON.stringify(miss)}`);
});

t.test('the current endpoints, the page and the document carry one weak ETag, the same on every gateway', async (t) => {
  const a = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const b = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { api_key: ka } = await newAccount(a, { plan: 'starter' });
  const { api_key: kb } = await newAccount(b, { plan: 'starter' });
  const etag = (await a.get(`${SIMPLE}?api_key=${ka}`)).headers.get('etag') as string;
  t.match(etag, WEAK);
  t.equal((await a.get(`${CURRENT}?api_key=${ka}`)).headers.get('etag'), etag, 'both envelopes');
  t.equal((await b.get(`${SIMPLE}?api_key=${kb}`)).headers.get('etag'), etag, 'another gateway, another store');
  t.equal((await a.get('/')).headers.get('etag'), etag, 'the page');
  t.equal((await b.get('/fuel-api/openapi.json')).headers.get('etag'), etag, 'the API document');
  const head = await a.get(`${SIMPLE}?api_key=${ka}`, { method: 'HEAD' });
  t.equal(head.headers.get('etag'), etag, 'HEAD');
  const page = await a.get('/', { headers: { 'If-None-Match': etag } });
  t.equal(page.status, 304);
  t.equal(page.headers.get('cache-control'), 'no-cache');
  t.equal(await page.text(), '');
  const doc = await b.get('/fuel-api/openapi.json', { headers: { 'If-None-Match': `"x", ${etag}` } });
  t.equal(doc.status, 304);
  t.equal(doc.headers.get('etag'), etag);
});

t.test('prices turning stale change the one ETag, so the page that then says so is not answered 304', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, { prices: { max_age_days: 10 } }, { clock });
  const { api_key: key } = await newAccount(gw, { plan: 'starter' });
  const answer = await gw.get(`${SIMPLE}?api_key=${key}`);
  const effective = Date.parse(
    `${((await answer.json()) as { effective_date: string }).effective_date}T00:01:00+02:00`,
  );
  // Fresh for 10 whole days after the set took effect, stale from the 11th (prices/staleness.ts).
  clock.advanceTo(effective + 11 * 86_400_000 - 60_000);
  const fresh = (await gw.get(`${SIMPLE}?api_key=${key}`)).headers.get('etag') as string;
  t.match(fresh, /^W\/"[A-Za-z0-9_-]{27}"$/);
  t.notMatch(await (await gw.get('/')).text(), 'class="stale"', 'the page has no notice yet');
  clock.advanceTo(effective + 11 * 86_400_000);
  const stale = (await gw.get(`${SIMPLE}?api_key=${key}`)).headers.get('etag') as string;
  t.not(stale, fresh, 'a new tag once the prices are stale');
  t.equal((await gw.get('/fuel-api/openapi.json')).headers.get('etag'), stale, 'the document carries it too');
  const page = await gw.get('/', { headers: { 'If-None-Match': fresh } });
  t.equal(page.status, 200, 'the page cached while fresh is sent again');
  t.equal(page.headers.get('etag'), stale);
  t.match(await page.text(), 'class="stale"', 'now with the notice');
  const before = await used(gw, key);
  const polled = await gw.get(`${SIMPLE}?api_key=${key}`, { headers: { 'If-None-Match': fresh } });
  t.equal(polled.status, 200, 'a poller holding the fresh tag gets the prices once more');
  t.equal(await used(gw, key), before + 1, 'and that one is counted');
  t.equal((await gw.get(`${SIMPLE}?api_key=${key}`, { headers: { 'If-None-Match': stale } })).status, 304);
});

t.test(
  '1,000 conditional requests answer 304 and count nothing; a publish makes the next one a counted 200',
  async (t) => {
    const clock = new ManualClock(NOW);
    const gw = await startGateway(t, {}, { clock });
    const { api_key: key } = await newAccount(gw, { plan: 'starter' });
    const first = await gw.get(`${CURRENT}?api_key=${key}`);
    const etag = first.headers.get('etag') as string;
    t.equal(await used(gw, key), 1);
    const statuses = new Map<number, number>();
    for (let batch = 0; batch < 20; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          gw.get(`${i % 2 ? SIMPLE : CURRENT}?api_key=${key}`, { headers: { 'If-None-Match': etag } }),
        ),
      );
      for (const r of answers) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status === 304 && (await r.text()) !== '') t.fail('a 304 with a body');
      }
    }
    t.same(Object.fromEntries(statuses), { 304: 1000 });
    t.equal(await used(gw, key), 1, 'requests_used unchanged');
    const one = await gw.get(`${SIMPLE}?api_key=${key}`, { headers: { 'If-None-Match': etag } });
    t.equal(one.headers.get('etag'), etag);
    t.equal(one.headers.get('x-ratelimit-remaining'), '1999');
    t.equal(one.headers.get('ratelimit'), `"period";r=1999;t=${30 * 86400}`);
    t.equal(one.headers.get('cache-control'), 'no-store');
    t.equal(one.headers.get('content-length'), null);

    await gw.app.book.publish({
      effective_date: '2026-11-18',
      updated_at: '2026-11-17 10:00:00',
      coastal: REGION,
      inland: REGION,
    });
    const after = await gw.get(`${SIMPLE}?api_key=${key}`, { headers: { 'If-None-Match': etag } });
    t.equal(after.status, 200, 'the first request after a publish');
    const body = (await after.json()) as { effective_date: string; usage: { requests_used: number } };
    t.equal(body.effective_date, '2026-11-18');
    t.equal(body.usage.requests_used, 2, 'and counted');
    const next = after.headers.get('etag') as string;
    t.not(next, etag);
    t.equal((await gw.get(`${SIMPLE}?api_key=${key}`, { headers: { 'If-None-Match': next } })).status, 304);
    t.equal((await gw.get('/', { headers: { 'If-None-Match': etag } })).status, 200, 'the page changed too');
  },
);

t.test('the key is still checked, and a used-up allowance still gets its 304', async (t) => {
  const gw = await startGateway(
    t,
    { limits: { invalid_key_throttle: { max_attempts: 2, window_s: 60, block_s: 30 } } },
    { clock: new ManualClock(NOW) },
  );
  const { api_key: key } = await newAccount(gw, { plan: 'starter', limit: 1 });
  const { api_key: inactive } = await newAccount(gw, { plan: 'starter', status: 'inactive' });
  const etag = (await gw.get(`${SIMPLE}?api_key=${key}`)).headers.get('etag') as string;
  const inm = { 'If-None-Match': etag };
  t.equal((await gw.get(SIMPLE, { headers: inm })).status, 401, 'no key');
  t.equal((await gw.get(`${SIMPLE}?api_key=${inactive}`, { headers: inm })).status, 403, 'inactive');
  t.equal((await gw.get(`${SIMPLE}?api_key=fpg_${'B'.repeat(38)}`, { headers: inm })).status, 401, 'unknown');
  const bad = await gw.get(`${SIMPLE}?api_key=nope`, { headers: inm });
  t.equal(bad.status, 401);
  t.equal((await gw.get(`${SIMPLE}?api_key=nope`, { headers: inm })).status, 429, 'the invalid-key throttle');
  t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 429, 'the allowance is used up');
  const free = await gw.get(`${SIMPLE}?api_key=${key}`, { headers: inm });
  t.equal(free.status, 304, 'but a conditional request is answered');
  t.equal(free.headers.get('x-ratelimit-remaining'), '0');
  const head = await gw.get(`${CURRENT}?api_key=${key}`, { method: 'HEAD', headers: inm });
  t.equal(head.status, 304, 'HEAD too');
});

t.test('metering.count_not_modified: true counts a 304 like a 200', async (t) => {
  const gw = await startGateway(t, { metering: { count_not_modified: true } }, { clock: new ManualClock(NOW) });
  const { api_key: key } = await newAccount(gw, { plan: 'starter', limit: 3 });
  const etag = (await gw.get(`${SIMPLE}?api_key=${key}`)).headers.get('etag') as string;
  const r = await gw.get(`${SIMPLE}?api_key=${key}`, { headers: { 'If-None-Match': etag } });
  t.equal(r.status, 304);
  t.equal(r.headers.get('x-ratelimit-remaining'), '1');
  t.equal((await gw.get(`${SIMPLE}?api_key=${key}`, { headers: { 'If-None-Match': etag } })).status, 304);
  t.equal(await used(gw, key), 3);
  t.equal((await gw.get(`${SIMPLE}?api_key=${key}`, { headers: { 'If-None-Match': etag } })).status, 429);
});

t.test('from a raw socket: repeated If-None-Match fields form one list; odd values get the full answer', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { api_key: key } = await newAccount(gw, { plan: 'starter' });
  const etag = (await gw.get(`${SIMPLE}?api_key=${key}`)).headers.get('etag') as string;
  const port = gw.app.publicAddress.port;
  const ask = (lines: string[], method = 'GET'): Promise<string> =>
    rawRequest(
      port,
      `${method} ${SIMPLE}?api_key=${key} HTTP/1.1\r\nHost: x\r\n${lines.map((l) => `${l}\r\n`).join('')}Connection: close\r\n\r\n`,
    );
  const repeated = await ask(['If-None-Match: "nope"', `if-none-match: ${etag}`]);
  t.match(repeated, /^HTTP\/1\.1 304 /);
  t.notMatch(repeated, /transfer-encoding|content-length/i, 'no body framing on a 304');
  t.ok(repeated.endsWith('\r\n\r\n'), 'nothing after the head');
  for (const odd of [
    'If-None-Match: ',
    `If-None-Match: ${etag.toLowerCase()}`,
    `If-None-Match: ${etag}x`,
    `If-None-Match: ${'"a",'.repeat(1000)}`,
    'If-None-Match: W/',
    'If-None-Match: "\u00ff"',
  ]) {
    const answer = await ask([odd]);
    t.match(answer, /^HTTP\/1\.1 200 /, odd.slice(0, 40));
  }
  t.match(await ask([`If-None-Match: ${etag}`], 'HEAD'), /^HTTP\/1\.1 304 /);
  t.equal(await used(gw, key), 7, 'the six odd ones were counted as the 200s they got');
});
