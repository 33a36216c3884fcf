import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';

const SIMPLE = '/fuel-api/api/simple-current.php';

/** Redis's own count of the commands it ran, by command name. */
async function commandCounts(cli: (...args: string[]) => Promise<string>): Promise<Record<string, number>> {
  const out = await cli('INFO', 'commandstats');
  const counts: Record<string, number> = {};
  for (const line of out.split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (m) counts[m[1] as string] = Number(m[2]);
  }
  return counts;
}

t.test('a warm metered request costs Redis exactly one command: the consume script', async (t) => {
  const redis = await startRedis(t);
  const gw = await startGateway(t, { store: { type: 'redis', redis: { url: redis.url } }, log: { access: false } });
  const { api_key } = (await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' })).body;
  t.equal((await gw.get(`${SIMPLE}?api_key=${api_key}`)).status, 200, 'first request loads the account');
  await redis.cli('CONFIG', 'RESETSTAT');
  for (let i = 0; i < 25; i++) t.equal((await gw.get(`/fuel-api/api/${i % 2 ? 'current' : 'simple-current'}.php?api_key=${api_key}`)).status, 200);
  const counts = await commandCounts(redis.cli);
  delete counts['config|resetstat'];
  // Redis also counts the calls the script makes inside itself (HMGET account, GET and INCR the
  // counter); any extra command sent by the gateway would raise one of these above 25.
  t.same(counts, { evalsha: 25, hmget: 25, get: 25, incr: 25 }, 'one EVALSHA per request and nothing else');
});
