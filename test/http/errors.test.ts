import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { generateKey } from '../../src/keys/key-generator.js';
import { allowanceFor } from '../../src/quota/allowance.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/raw.js';
import { tempDir } from '../helpers/tmp.js';
import { scaled } from '../helpers/wait.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

const SIMPLE = '/fuel-api/api/simple-current.php';
const HIST = '/fuel-api/api/historical.php';

/** The error body; a 5xx one gives the request id as `ref`. */
async function expectError(t: Test, res: Response, status: number, message: string): Promise<void> {
  t.equal(res.status, status, `status ${status} for "${message}"`);
  t.equal(res.headers.get('content-type'), 'application/json');
  const ref = status >= 500 ? { ref: res.headers.get('x-request-id') } : {};
  t.equal(await res.text(), JSON.stringify({ success: false, message, ...ref }));
}

/** The demo developer account's count, read without counting. */
async function used(gw: TestGateway, key: string): Promise<number> {
  const r = await gw.get(`${SIMPLE}?api_key=${key}`, { method: 'HEAD' });
  return 100 - Number(r.headers.get('x-ratelimit-remaining'));
}

t.test('every bad key gets the error body, is never counted, and the process keeps serving', async (t) => {
  const gw = await startGateway(
    t,
    { limits: { invalid_key_throttle: { max_attempts: 1000 } } },
    { clock: new ManualClock(NOW) },
  );
  const key = gw.app.demoKeys['developer'] as string;
  await expectError(t, await gw.get(SIMPLE), 401, 'API key is required.');
  await expectError(t, await gw.get(`${SIMPLE}?api_key=`), 401, 'API key is required.');
  await expectError(t, await gw.get(SIMPLE, { headers: { 'x-api-key': '' } }), 401, 'API key is required.');
  await expectError(t, await gw.get(`${SIMPLE}?api_key=fpg_${'A'.repeat(38)}`), 401, 'Invalid API key.');
  await expectError(t, await gw.get(`${SIMPLE}?api_key=nonsense`), 401, 'Invalid API key.');
  await expectError(t, await gw.get(`${SIMPLE}?api_key=${key}&api_key=${key}`), 401, 'Invalid API key.');
  await expectError(t, await gw.get(`${SIMPLE}?api_key=${key}&api_key=other`), 401, 'Invalid API key.');
  await expectError(
    t,
    await gw.get(`${SIMPLE}?api_key=${key}`, { headers: { 'x-api-key': 'other' } }),
    401,
    'Invalid API key.',
  );
  await expectError(t, await gw.get(`${SIMPLE}?api_key=${'k'.repeat(200)}`), 401, 'Invalid API key.');
  // 10 kB does not fit the request head limit (max_header_bytes, 8 kB by default).
  await expectError(
    t,
    await gw.get(`${SIMPLE}?api_key=${'k'.repeat(10_000)}`),
    431,
    'Request header fields too large.',
  );
  await expectError(
    t,
    await gw.get(SIMPLE, { headers: { 'x-api-key': 'k'.repeat(10_000) } }),
    431,
    'Request header fields too large.',
  );
  await expectError(t, await gw.get(`${SIMPLE}?api_key=${encodeURIComponent('ключ-ключ')}`), 401, 'Invalid API key.');
  await expectError(t, await gw.get(`${SIMPLE}?api_key=%E0%A4%A`), 401, 'Invalid API key.');
  await expectError(t, await gw.get(`${SIMPLE}?api_key=%%%`), 401, 'Invalid API key.');
  await expectError(
    t,
    await gw.get(`${SIMPLE}?api_key=${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`),
    401,
    'Invalid API key.',
  );
  t.equal(await used(gw, key), 0, 'nothing was counted');
  t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 200, 'still serving');
});

t.test(
  'a key already served gets the same answer to every odd form of request as a key seen for the first time',
  async (t) => {
    const gw = await startGateway(
      t,
      { limits: { invalid_key_throttle: { max_attempts: 1000 } } },
      { clock: new ManualClock(NOW) },
    );
    const key = gw.app.demoKeys['developer'] as string;
    t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 200, 'served once: the process now knows the key');
    await expectError(
      t,
      await gw.get(`${SIMPLE}?api_key=${key}`, { headers: { 'x-api-key': 'other' } }),
      401,
      'Invalid API key.',
    );
    await expectError(t, await gw.get(`${SIMPLE}?api_key=${key}&api_key=${key}`), 401, 'Invalid API key.');
    const port = gw.app.publicAddress.port;
    const twice = await rawRequest(
      port,
      `GET ${SIMPLE}?api_key=${key} HTTP/1.1\r\nHost: a\r\nX-API-Key: ${key}\r\nx-api-key: ${key}\r\nConnection: close\r\n\r\n`,
    );
    t.match(twice, /^HTTP\/1\.1 401 [\s\S]*"Invalid API key\."/, 'the header twice (read as "K, K"): invalid');
    const headerTwice = await rawRequest(
      port,
      `GET ${SIMPLE} HTTP/1.1\r\nHost: a\r\nX-API-Key: ${key}\r\nX-API-KEY: ${key}\r\nConnection: close\r\n\r\n`,
    );
    t.match(headerTwice, /^HTTP\/1\.1 401 /, 'the header alone, twice: invalid');
    t.equal(await used(gw, key), 1, 'none of those was counted');
    const same = await gw.get(`${SIMPLE}?api_key=${key}`, { headers: { 'X-API-Key': key } });
    t.equal(same.status, 200, 'the same key in the query and the header: served');
    t.equal((await gw.get(`${SIMPLE}?api_key=${key}&from=x`)).status, 200, 'another parameter beside it: served');
    t.equal((await gw.get(`${SIMPLE}?api_key=${encodeURIComponent(key)}&`)).status, 200, 'a trailing &: served');
    t.equal(await used(gw, key), 4, 'each of those counted once');
  },
);

t.test('an inactive account gets 403 and is not counted', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { account, api_key } = await newAccount(gw, { plan: 'developer', status: 'inactive' });
  await expectError(t, await gw.get(`${SIMPLE}?api_key=${api_key}`), 403, 'API key is inactive.');
  await expectError(t, await gw.get(`/fuel-api/api/current.php?api_key=${api_key}`), 403, 'API key is inactive.');
  const { period } = allowanceFor(account, gw.config.plans, gw.config.time_zone, NOW);
  t.equal(await gw.app.store.counting.usage(account.id, period.id), 0, 'nothing counted in its period');
});

t.test('an exhausted allowance gets 429 with Retry-After until the period ends', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const monthly = await newAccount(gw, { plan: 'starter', limit: 1 });
  t.equal((await gw.get(`${SIMPLE}?api_key=${monthly.api_key}`)).status, 200);
  const m = await gw.get(`/fuel-api/api/current.php?api_key=${monthly.api_key}`);
  t.equal(m.headers.get('retry-after'), String(30 * 86400), 'seconds until the cycle ends (Nov 23 → Dec 23)');
  t.equal(m.headers.get('x-ratelimit-remaining'), '0');
  await expectError(t, m, 429, 'Monthly API request limit reached.');
  const trial = await newAccount(gw, { plan: 'developer', limit: 1 });
  await gw.get(`${SIMPLE}?api_key=${trial.api_key}`);
  const r = await gw.get(`${SIMPLE}?api_key=${trial.api_key}`);
  t.equal(r.headers.get('retry-after'), String(14 * 86400));
  await expectError(t, r, 429, 'Trial API request limit reached.');
});

t.test(
  'too many invalid keys from one address are throttled until the block lifts; well-formed keys still get one try a second',
  async (t) => {
    const clock = new ManualClock(NOW);
    const gw = await startGateway(
      t,
      { limits: { invalid_key_throttle: { max_attempts: 3, window_s: 60, block_s: 30 } } },
      { clock },
    );
    const key = gw.app.demoKeys['developer'] as string;
    for (let i = 0; i < 3; i++)
      await expectError(t, await gw.get(`${SIMPLE}?api_key=fpg_${'B'.repeat(38)}`), 401, 'Invalid API key.');
    const blocked = await gw.get(`${SIMPLE}?api_key=nonsense`);
    t.equal(blocked.headers.get('retry-after'), '30');
    await expectError(t, blocked, 429, 'Too many invalid API key attempts.');
    // A scanner that computes checksums: a well-formed key waits a second from the block's start,
    // then one reaches the store, and the next waits a second again.
    await expectError(t, await gw.get(`${SIMPLE}?api_key=${key}`), 429, 'Too many invalid API key attempts.');
    clock.advance(1000);
    await expectError(t, await gw.get(`${SIMPLE}?api_key=${generateKey()}`), 401, 'Invalid API key.');
    await expectError(t, await gw.get(`${SIMPLE}?api_key=${key}`), 429, 'Too many invalid API key attempts.');
    await expectError(t, await gw.get(`${SIMPLE}?api_key=${generateKey()}`), 429, 'Too many invalid API key attempts.');
    clock.advance(1000);
    t.equal(
      (await gw.get(`${SIMPLE}?api_key=${key}`)).status,
      200,
      'a second later, a customer behind the same address gets in with a key this process has not seen',
    );
    await expectError(t, await gw.get(`${SIMPLE}?api_key=nonsense`), 429, 'Too many invalid API key attempts.');
    t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 200, 'and, now known active, is served at once');
    clock.advance(30_000);
    t.equal((await gw.get(`${SIMPLE}?api_key=${gw.app.demoKeys['starter']}`)).status, 200, 'the block lifts');
    t.equal(await used(gw, key), 2, 'the throttled requests were not counted');
  },
);

t.test('behind a trusted proxy the throttle blocks the client, not the proxy', async (t) => {
  const gw = await startGateway(
    t,
    { server: { trusted_proxies: ['127.0.0.1'] }, limits: { invalid_key_throttle: { max_attempts: 2 } } },
    { clock: new ManualClock(NOW) },
  );
  const bad = (ip: string) => gw.get(`${SIMPLE}?api_key=nonsense`, { headers: { 'x-forwarded-for': ip } });
  await bad('198.51.100.7');
  await bad('198.51.100.7');
  t.equal((await bad('198.51.100.7')).status, 429, 'the scanning client is blocked');
  const other = await gw.get(`${SIMPLE}?api_key=${gw.app.demoKeys['developer']}`, {
    headers: { 'x-forwarded-for': '198.51.100.8' },
  });
  t.equal(other.status, 200, 'another client behind the same proxy is not');
});

t.test('the key is checked before the query: an unknown or inactive key never learns more', async (t) => {
  const gw = await startGateway(
    t,
    { limits: { invalid_key_throttle: { max_attempts: 1000 } } },
    { clock: new ManualClock(NOW) },
  );
  const unknown = `fpg_${'A'.repeat(38)}`;
  const { api_key: inactive } = await newAccount(gw, { plan: 'developer', status: 'inactive' });
  await expectError(t, await gw.get(`${HIST}?api_key=${unknown}&month=13&year=2025`), 401, 'Invalid API key.');
  await expectError(t, await gw.get(`${HIST}?api_key=${inactive}&month=13&year=2025`), 403, 'API key is inactive.');
  await expectError(
    t,
    await gw.get(`${HIST}?api_key=${gw.app.demoKeys['developer']}&month=13&year=2025`),
    400,
    'Invalid month.',
  );
});

t.test('historical: bad month and year get 400 and are not counted', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['developer'] as string;
  for (const m of ['', '0', '13', 'ab', '1.5', '001']) {
    await expectError(t, await gw.get(`${HIST}?api_key=${key}&month=${m}&year=2025`), 400, 'Invalid month.');
  }
  for (const y of ['', '25', '20255', 'year']) {
    await expectError(t, await gw.get(`${HIST}?api_key=${key}&month=3&year=${y}`), 400, 'Invalid year.');
  }
  t.equal(await used(gw, key), 0);
});

t.test('historical switched off answers 501', async (t) => {
  const gw = await startGateway(t, { prices: { historical_enabled: false } }, { clock: new ManualClock(NOW) });
  await expectError(
    t,
    await gw.get(`${HIST}?api_key=${gw.app.demoKeys['developer']}&month=1&year=2026`),
    501,
    'Historical data is not yet available.',
  );
});

t.test('unknown paths get 404 and other methods 405 with Allow', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  await expectError(t, await gw.get('/fuel-api/api/nope.php'), 404, 'Endpoint not found.');
  await expectError(t, await gw.get('/index.html'), 404, 'Endpoint not found.');
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
    const r = await gw.get(`${SIMPLE}?api_key=${gw.app.demoKeys['developer']}`, { method });
    t.equal(r.headers.get('allow'), 'GET, HEAD');
    await expectError(t, r, 405, 'Method not allowed.');
  }
});

t.test('no price set in effect answers 503 and /readyz says why', async (t) => {
  const dir = tempDir('fpg-');
  const file = join(dir, 'future.json');
  writeFileSync(file, JSON.stringify([{ effective_date: '2030-01-02', coastal: region(), inland: region() }]));
  const gw = await startGateway(t, { prices: { file } }, { clock: new ManualClock(NOW) });
  const r = await gw.get(`${SIMPLE}?api_key=${gw.app.demoKeys['developer']}`);
  t.equal(r.headers.get('retry-after'), '1');
  await expectError(t, r, 503, 'Service temporarily unavailable.');
  const ready = await gw.get('/readyz');
  t.equal(ready.status, 503);
  t.same(await ready.json(), { ready: false, store: true, prices: false });
  await expectError(t, await gw.get(`${SIMPLE}?api_key=fpg_${'A'.repeat(38)}`), 401, 'Invalid API key.');
});

t.test('an unexpected failure answers 500 without a stack trace and the process goes on', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  // An account whose plan the config no longer defines cannot be metered.
  const { api_key, account } = await newAccount(gw, { plan: 'starter' });
  await gw.app.store.accounts.updateAccount(account.id, { plan: 'retired' });
  await expectError(t, await gw.get(`${SIMPLE}?api_key=${api_key}`), 500, 'Internal server error.');
  t.equal((await gw.get(`${SIMPLE}?api_key=${gw.app.demoKeys['developer']}`)).status, 200);
});

t.test('messages come from the config', async (t) => {
  const gw = await startGateway(t, { messages: { missing_key: 'Supply api_key.' } }, { clock: new ManualClock(NOW) });
  await expectError(t, await gw.get(SIMPLE), 401, 'Supply api_key.');
});

t.test('malformed requests and oversized headers get the error body, and the process keeps serving', async (t) => {
  const gw = await startGateway(t, { server: { max_header_bytes: 2048 } }, { clock: new ManualClock(NOW) });
  const port = gw.app.publicAddress.port;
  const bad = await rawRequest(port, 'GET /fuel api HTTP/1.1\r\nHost: x\r\n\r\n');
  t.match(bad, /^HTTP\/1\.1 400 /);
  t.match(bad, /\{"success":false,"message":"Bad request\."\}$/);
  const junk = await rawRequest(port, '\x00\x01garbage\r\n\r\n');
  t.match(junk, /^HTTP\/1\.1 400 /);
  const large = await rawRequest(port, `GET ${SIMPLE} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(4096)}\r\n\r\n`);
  t.match(large, /^HTTP\/1\.1 431 /);
  t.match(large, /\{"success":false,"message":"Request header fields too large\."\}$/);
  const star = await rawRequest(port, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  t.match(star, /^HTTP\/1\.1 400 /);
  const absolute = await rawRequest(
    port,
    `GET http://example.test${SIMPLE} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
  );
  t.match(absolute, /^HTTP\/1\.1 401 /, 'absolute-form targets are routed by their path');
  t.equal((await gw.get('/healthz')).status, 200);
});

t.test('a client too slow to send its request head gets 408', async (t) => {
  const gw = await startGateway(
    t,
    { server: { headers_timeout_ms: 300, request_timeout_ms: 600 } },
    { clock: new ManualClock(NOW) },
  );
  const started = Date.now();
  const slow = await rawRequest(gw.app.publicAddress.port, `GET ${SIMPLE} HTTP/1.1\r\nHost: x\r\n`);
  t.match(slow, /^HTTP\/1\.1 408 /);
  t.match(slow, /\{"success":false,"message":"Request timed out\."\}$/);
  t.ok(Date.now() - started < scaled(3000), 'within a few seconds');
  // A request whose body never fully arrives, after it was answered: the connection is closed,
  // not sent a 408 that a pooling proxy would take for the answer to its next request.
  const answered = await rawRequest(
    gw.app.publicAddress.port,
    `POST ${SIMPLE} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab`,
  );
  t.match(answered, /^HTTP\/1\.1 405 /);
  t.notMatch(answered, /408/);
});

function region() {
  return { petrol_93: '20.00', petrol_95: '20.10', diesel_50ppm: '19.00', diesel_500ppm: '18.90' };
}
