import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';

const SIMPLE = '/fuel-api/api/simple-current.php';

for (const policy of ['reject', 'allow'] as const) {
  t.test(`store.on_error: ${policy} decides what metered requests get while Redis is down`, async (t) => {
    const redis = await startRedis(t);
    const gw = await startGateway(t, { store: { type: 'redis', on_error: policy, redis: { url: redis.url, command_timeout_ms: 200 } } });
    const { api_key } = (await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' })).body;
    // A real key, but one this gateway has never served: during the outage it cannot be checked.
    const unseen = (await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' })).body.api_key as string;
    t.equal((await gw.get(`${SIMPLE}?api_key=${api_key}`)).status, 200);
    await redis.stop();
    const started = Date.now();
    const r = await gw.get(`${SIMPLE}?api_key=${api_key}`);
    t.ok(Date.now() - started < 1000, 'answered within a second');
    const body = await r.text();
    if (policy === 'reject') {
      t.equal(r.status, 503);
      t.equal(r.headers.get('retry-after'), '1');
      t.equal(body, '{"success":false,"message":"Service temporarily unavailable."}');
    } else {
      t.equal(r.status, 200, 'served unmetered');
      t.equal((JSON.parse(body) as { usage: unknown }).usage, null, 'usage is null: nothing was counted');
      t.equal(r.headers.get('x-ratelimit-remaining'), null);
      const metrics = (await adminCall(gw, 'GET', '/metrics')).body as string;
      t.match(metrics, /^fuel_gateway_unmetered_requests_total 1$/m);
      t.match(gw.logs(), /serving unmetered/);
      const stranger = await gw.get(`${SIMPLE}?api_key=${unseen}`);
      t.equal(stranger.status, 503, 'a key this process has not seen active is not let in unmetered');
      const badQuery = await gw.get(`/fuel-api/api/historical.php?api_key=${api_key}&month=13&year=2026`);
      t.equal(badQuery.status, 400, 'a known key still hears what is wrong with its query');
    }
    t.match((await adminCall(gw, 'GET', '/metrics')).body, new RegExp(`^fuel_gateway_store_errors_total ${policy === 'allow' ? 2 : 1}$`, 'm'));
    t.equal((await gw.get('/readyz')).status, 503);
  });
}
