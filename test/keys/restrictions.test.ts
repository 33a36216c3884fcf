/**
 * A key's own limits on the public routes: scopes, address allowlists (behind a trusted proxy
 * and for an IPv4-mapped peer), expiry and its warning header. None of the refusals is counted,
 * and a key without limits answers exactly as before.
 */
import { request } from 'node:http';
import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startOrigin } from '../helpers/origin.js';
import { used } from '../helpers/usage.js';
import { waitFor } from '../helpers/wait.js';

const S = '/fuel-api/api/simple-current.php';
const H = '/fuel-api/api/historical.php?month=9&year=2026';
const U = '/fuel-api/api/usage.php';
const UH = '/fuel-api/api/usage-history.php?from=2026-11-01&to=2026-11-23';
const FC = '/exapi/fuel/current';
const FY = '/exapi/fuel/byyear/2025';
const DAY = 86_400_000;
const SCOPE = { success: false, message: 'API key is not allowed to use this endpoint.' };
const ADDRESS = { success: false, message: 'API key is not allowed from this address.' };

async function account(gw: TestGateway) {
  const created = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  const id = created.body.account.id as string;
  const add = async (body: Record<string, unknown>): Promise<string> =>
    (await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, { name: 'k', ...body })).body.api_key;
  return { id, key: created.body.api_key as string, add };
}

const call = async (gw: TestGateway, path: string, key: string, headers: Record<string, string> = {}) => {
  const r = await gw.get(path, { headers: { 'X-API-Key': key, ...headers } });
  const text = await r.text();
  return { status: r.status, text, headers: r.headers };
};

t.test('scopes: each route needs its scope; outside it 403, not counted', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { key, add } = await account(gw);
  const history = await add({ scopes: ['history'] });
  const prices = await add({ scopes: ['prices'] });
  for (const path of [S, FC, U, UH]) {
    const r = await call(gw, path, history);
    t.equal(r.status, 403, `${path} with a history key`);
    t.same(JSON.parse(r.text), SCOPE);
  }
  t.equal((await call(gw, H, history)).status, 200, 'historical with a history key');
  t.equal((await call(gw, FY, history, { key: history })).status, 200, "FuelSA's by-year route is history");
  t.equal((await call(gw, S, prices)).status, 200);
  t.equal((await call(gw, FC, prices)).status, 200, "FuelSA's current route is prices");
  t.equal((await call(gw, H, prices)).status, 403);
  t.equal(
    (await call(gw, '/fuel-api/api/historical.php?month=13&year=2026', prices)).status,
    403,
    'the key comes before the query',
  );
  t.equal(await used(gw, key), 4, 'only the four admitted metered requests were counted');
});

t.test('allowlists: the client address as the throttle sees it, trusted proxies and IPv4-mapped peers', async (t) => {
  const gw = await startGateway(
    t,
    { server: { trusted_proxies: ['127.0.0.1'] }, listen: { public: { host: '::', port: 0 } } },
    { clock: new ManualClock(NOW) },
  );
  const { key, add } = await account(gw);
  const office = await add({ allowed_cidrs: ['198.51.100.0/24', '2001:db8:1::/48'] });
  const local = await add({ allowed_cidrs: ['127.0.0.0/8'] });
  const refused = await call(gw, S, office);
  t.equal(refused.status, 403, 'the peer is not in the allowlist');
  t.same(JSON.parse(refused.text), ADDRESS);
  t.equal((await call(gw, S, office, { 'X-Forwarded-For': '198.51.100.9' })).status, 200, 'via the trusted proxy');
  t.equal((await call(gw, S, office, { 'X-Forwarded-For': '2001:db8:1:2::5' })).status, 200, 'an IPv6 client');
  t.equal((await call(gw, S, office, { 'X-Forwarded-For': '2001:db8:2::5' })).status, 403);
  t.equal(
    (await call(gw, S, office, { 'X-Forwarded-For': '198.51.100.9, 203.0.113.1' })).status,
    403,
    'the right-most hop that is not a trusted proxy counts, not what the client claims to its left',
  );
  // Reached over IPv4 on a dual-stack listener, the peer is ::ffff:127.0.0.1: it matches 127.0.0.0/8.
  const mapped = await new Promise<number>((resolve, reject) => {
    const port = gw.app.publicAddress.port;
    request({ host: '127.0.0.1', port, path: S, headers: { 'X-API-Key': local } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end();
  });
  t.equal(mapped, 200, 'an IPv4-mapped peer matches its IPv4 range');
  const v6 = await new Promise<number>((resolve, reject) => {
    request({ host: '::1', port: gw.app.publicAddress.port, path: S, headers: { 'X-API-Key': local } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end();
  });
  t.equal(v6, 403, '::1 is not in 127.0.0.0/8');
  t.equal(await used(gw, key), 3, 'refusals are not counted');
});

t.test('expiry: X-API-Key-Expires within the warning days, 401 after, never counted', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, {}, { clock });
  const { key, add } = await account(gw);
  const expires = new Date(NOW + 3 * DAY).toISOString();
  const soon = await add({ expires_at: expires });
  const later = await add({ expires_at: new Date(NOW + 30 * DAY).toISOString() });
  const ok = await call(gw, S, soon);
  t.equal(ok.status, 200);
  t.equal(ok.headers.get('x-api-key-expires'), expires, 'within 7 days: the warning');
  t.equal((await call(gw, U, soon)).headers.get('x-api-key-expires'), expires, 'on usage.php too');
  t.equal(
    (await call(gw, H.replace('month=9', 'month=13'), soon)).headers.get('x-api-key-expires'),
    expires,
    'and on errors',
  );
  t.equal((await call(gw, S, later)).headers.get('x-api-key-expires'), null, '30 days out: none yet');
  t.equal((await call(gw, S, key)).headers.get('x-api-key-expires'), null, 'a key without expiry: none');
  const before = await used(gw, key);
  clock.ms = NOW + 3 * DAY;
  const expired = await call(gw, S, soon);
  t.equal(expired.status, 401);
  t.same(JSON.parse(expired.text), { success: false, message: 'API key has expired.' });
  t.equal((await call(gw, U, soon)).status, 401, 'usage.php too');
  t.equal(await used(gw, key), before, 'not counted');
  clock.ms = NOW + 23 * DAY + 1;
  t.equal((await call(gw, S, later)).headers.get('x-api-key-expires'), new Date(NOW + 30 * DAY).toISOString());
});

t.test('the expired-key message is configurable like every message', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, { messages: { expired_key: 'Key expired.' } }, { clock });
  const { add } = await account(gw);
  const gone = await add({ expires_at: new Date(NOW + 1000).toISOString() });
  clock.ms = NOW + 1000;
  t.same(JSON.parse((await call(gw, S, gone)).text), { success: false, message: 'Key expired.' });
});

t.test('a default key without limits answers byte for byte as before', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { key } = await account(gw);
  const r = await call(gw, S, key);
  t.equal(r.status, 200);
  t.equal(r.headers.get('x-api-key-expires'), null);
  t.same(Object.keys(JSON.parse(r.text)), ['success', 'effective_date', 'fuel_prices', 'usage']);
});

t.test('the pass-through paths need the passthrough scope, and warn of expiry like the own routes', async (t) => {
  const origin = await startOrigin(t);
  const gw = await startGateway(t, {
    upstream: { url: origin.url, api_key: origin.key, poll_interval_ms: 60_000, proxy_paths: ['/origin/*'] },
  });
  await waitFor('first poll', async () => (await gw.get('/readyz')).status === 200);
  const { add } = await account(gw);
  const prices = await add({ scopes: ['prices'] });
  const expires = new Date(Date.now() + 2 * DAY).toISOString();
  const through = await add({ scopes: ['passthrough'], expires_at: expires });
  const refused = await call(gw, '/origin/echo', prices);
  t.equal(refused.status, 403);
  t.same(JSON.parse(refused.text), SCOPE);
  const seen = origin.seen.length;
  const ok = await call(gw, '/origin/echo', through);
  t.equal(ok.status, 200);
  t.equal(ok.headers.get('x-api-key-expires'), expires, 'the origin answer carries the warning too');
  t.equal(origin.seen.length, seen + 1, 'only the admitted request reached the origin');
  t.equal((await call(gw, S, through)).status, 403, 'a passthrough key is no prices key');
});

t.test(
  'a prices key warm on this gateway is still refused every pass-through, and the origin never asked',
  async (t) => {
    const origin = await startOrigin(t);
    const gw = await startGateway(t, {
      upstream: { url: origin.url, api_key: origin.key, poll_interval_ms: 60_000, proxy_paths: ['/origin/*'] },
    });
    await waitFor('first poll', async () => (await gw.get('/readyz')).status === 200);
    const { key, add } = await account(gw);
    const prices = await add({ scopes: ['prices'] });
    // The account is now cached on the key's record: later requests take the warm path of the count.
    t.equal((await call(gw, S, prices)).status, 200, 'the prices key warms the account on its own route');
    const seen = origin.seen.length;
    for (let i = 0; i < 5; i++) {
      const r = await call(gw, '/origin/echo', prices);
      t.equal(r.status, 403, `pass-through ${i + 1} with the warm prices key`);
      t.same(JSON.parse(r.text), SCOPE);
    }
    t.equal(origin.seen.length, seen, 'no refused request reached the origin');
    t.equal(await used(gw, key), 1, 'only the one prices request was counted');
  },
);
