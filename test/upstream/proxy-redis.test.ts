// The pass-through on Redis (test/upstream/proxy.test.ts has the rest, on the memory store and
// so on the unit list): two gateways sharing the count.
import t from 'tap';
import { newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { startOrigin } from '../helpers/origin.js';
import { startRedis } from '../helpers/redis.js';
import { counted, ORIGIN_FAILED_OR_LIMIT, successesUntilRefused } from '../helpers/usage.js';
import { scaled, waitFor } from '../helpers/wait.js';

const TIMEOUT = 500;
const MAX_SOCKETS = 8;

t.test(
  'on Redis, two gateways passing through a flaky origin admit at most the limit and count exactly the successes',
  async (t) => {
    const redis = await startRedis(t);
    const origin = await startOrigin(t);
    const settings = {
      // Timeouts stretched for a busy machine, as redisConfig (test/helpers/cli.ts) does for processes.
      store: {
        type: 'redis',
        redis: { url: redis.url, command_timeout_ms: scaled(500), connect_timeout_ms: scaled(2000) },
      },
      upstream: {
        url: origin.url,
        api_key: origin.key,
        poll_interval_ms: 60_000,
        timeout_ms: TIMEOUT,
        proxy_paths: ['/origin/*'],
        max_sockets: MAX_SOCKETS,
        // Every request reaches the flaky origin: no cache, no coalescing.
        cache: { max_bytes: 0 },
      },
      limits: { invalid_key_throttle: { max_attempts: 1000 } },
    };
    const a = await startGateway(t, settings);
    const b = await startGateway(t, settings);
    await waitFor(
      'both ready',
      async () => (await a.get('/readyz')).status === 200 && (await b.get('/readyz')).status === 200,
    );
    const { api_key, account } = await newAccount(a, { plan: 'developer' }, Date.now());
    const answers = await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const r = await (i % 2 ? a : b).get(`/origin/flaky?api_key=${api_key}`);
        return r.status;
      }),
    );
    const ok = answers.filter((s) => s === 200).length;
    t.ok(ok <= 100, `${ok} successes, never more than the limit`);
    t.ok(
      answers.every((s) => ORIGIN_FAILED_OR_LIMIT.includes(s)),
      'only successes, origin failures and the limit',
    );
    await waitFor('refunds', async () => (await counted(a, account.id)) === ok, 3000);
    t.pass('Redis counted exactly the successes');
    let i = 0;
    const more = await successesUntilRefused((k) => (i++ % 2 ? a : b).get(`/origin/flaky?api_key=${k}`), api_key);
    t.equal(ok + more, 100, `failures gave their allowance back: ${ok} at once, ${ok + more} in all`);
    t.equal(await counted(a, account.id), 100);
  },
);
