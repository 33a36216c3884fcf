import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import type { GatewayError } from '../../src/failures.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const APP = 'https://app.example.com';
const preflight = (origin: string): RequestInit => ({
  method: 'OPTIONS',
  headers: { Origin: origin, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-api-key' },
});

t.test('CORS is off by default: no preflight, no Access-Control-Allow-Origin', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['starter'] as string;
  const pre = await gw.get(SIMPLE, preflight(APP));
  t.equal(pre.status, 405);
  t.equal(pre.headers.get('access-control-allow-origin'), null);
  const r = await gw.get(SIMPLE, { headers: { Origin: APP, 'X-API-Key': key } });
  t.equal(r.status, 200);
  t.equal(r.headers.get('access-control-allow-origin'), null);
  t.equal(r.headers.get('vary'), null);
});

t.test('listed origins get preflights answered and their origin echoed; others get nothing', async (t) => {
  const gw = await startGateway(
    t,
    { server: { cors_origins: [APP, 'http://localhost:3000'] } },
    { clock: new ManualClock(NOW) },
  );
  const key = gw.app.demoKeys['starter'] as string;
  const pre = await gw.get(SIMPLE, preflight(APP));
  t.equal(pre.status, 204);
  t.equal(pre.headers.get('access-control-allow-origin'), APP);
  t.equal(pre.headers.get('access-control-allow-methods'), 'GET, HEAD');
  t.equal(pre.headers.get('access-control-allow-headers'), 'X-API-Key');
  t.equal(pre.headers.get('access-control-max-age'), '600');
  t.equal(pre.headers.get('vary'), 'Origin');
  t.equal(await pre.text(), '');
  const other = await gw.get(SIMPLE, preflight('https://evil.example'));
  t.equal(other.status, 405);
  t.equal(other.headers.get('access-control-allow-origin'), null);
  const usage = (await (await gw.get('/fuel-api/api/usage.php', { headers: { 'X-API-Key': key } })).json()) as {
    usage: { requests_used: number };
  };
  t.equal(usage.usage.requests_used, 0, 'a preflight counts nothing');

  const r = await gw.get(SIMPLE, { headers: { Origin: APP, 'X-API-Key': key } });
  t.equal(r.status, 200);
  t.equal(r.headers.get('access-control-allow-origin'), APP);
  t.equal(r.headers.get('vary'), 'Origin');
  t.match(r.headers.get('access-control-expose-headers') ?? '', /X-RateLimit-Remaining/);
  t.equal(r.headers.get('x-ratelimit-remaining'), '1999', 'the metered answer is otherwise unchanged');
  const err = await gw.get(SIMPLE, { headers: { Origin: 'http://localhost:3000' } });
  t.equal(err.status, 401);
  t.equal(err.headers.get('access-control-allow-origin'), 'http://localhost:3000', 'errors are readable too');
  const foreign = await gw.get(SIMPLE, {
    headers: { Origin: 'https://app.example.com.evil.example', 'X-API-Key': key },
  });
  t.equal(foreign.status, 200);
  t.equal(foreign.headers.get('access-control-allow-origin'), null, 'exact match only');
  t.equal(foreign.headers.get('vary'), 'Origin');
  const plain = await gw.get(SIMPLE, { headers: { 'X-API-Key': key } });
  t.equal(plain.headers.get('vary'), null, 'a request without Origin is untouched');
});

t.test('server.cors_origins takes origins only', async (t) => {
  for (const bad of [
    'https://app.example.com/',
    'https://app.example.com/x',
    'ftp://files.example',
    '*',
    'app.example.com',
  ]) {
    const err = t.throws(() => loadConfig({ env: {}, overrides: { server: { cors_origins: [bad] } } })) as GatewayError;
    t.match(err.details.join('\n'), /server\.cors_origins\.0: expected an origin/, bad);
  }
  const ok = loadConfig({ env: {}, overrides: { server: { cors_origins: ['http://127.0.0.1:5173'] } } });
  t.same(ok.server.cors_origins, ['http://127.0.0.1:5173']);
});
