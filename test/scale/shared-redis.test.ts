import { get } from 'node:http';
import pino from 'pino';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { createAccount } from '../../src/keys/accounts.js';
import { allowanceFor } from '../../src/quota/allowance.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { type GatewayProcess, gatewayProcess, redisConfig } from '../helpers/cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startCluster, startRedis } from '../helpers/redis.js';
import { scaled, waitFor } from '../helpers/wait.js';

// Beside the bench (load 17) its three tests, each with gateways on a Redis or a Cluster, took over tap's 240 s.
t.setTimeout(480_000);

const SIMPLE = '/fuel-api/api/simple-current.php';
const FULL = '/fuel-api/api/current.php';
const TRIAL_LIMIT = '{"success":false,"message":"Trial API request limit reached."}';

/** A config file for gateways sharing one Redis (standalone URL or cluster nodes). */
const configFile = (redis: Record<string, unknown>): string =>
  redisConfig(redis, { limits: { invalid_key_throttle: { max_attempts: 100000 } } });

/** A GET on a connection of its own, closed after the answer. */
const statusOf = (url: string): Promise<number> =>
  new Promise((resolve, reject) =>
    get(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', reject),
  );

/** The test's own connection to the shared store, to create accounts and read counters. */
function storeFor(t: Test, file: string): RedisStore {
  const config = loadConfig({ file, env: {} });
  const store = new RedisStore(config.store.redis, pino({ level: 'silent' }));
  t.teardown(() => store.close());
  return store;
}

async function exactlyOnce(t: Test, file: string): Promise<void> {
  const gateways = await Promise.all([0, 1, 2].map(() => gatewayProcess(t, file)));
  const store = storeFor(t, file);
  const config = loadConfig({ file, env: {} });
  const { account, api_key } = await createAccount(
    store.accounts,
    config.plans,
    { plan: 'developer', label: 'scale', status: 'active', limit: null },
    Date.now(),
  );
  const answers = await Promise.all(
    Array.from({ length: 600 }, async (_, i) => {
      const gw = gateways[i % 3] as GatewayProcess;
      const r = await fetch(`${gw.base}${i % 2 ? SIMPLE : FULL}?api_key=${api_key}`);
      return { status: r.status, body: await r.text() };
    }),
  );
  const used = answers
    .filter((a) => a.status === 200)
    .map((a) => (JSON.parse(a.body) as { usage: { requests_used: number } }).usage.requests_used);
  t.equal(used.length, 100, 'exactly the limit succeeded');
  t.same(
    [...used].sort((a, b) => a - b),
    Array.from({ length: 100 }, (_, i) => i + 1),
    'each success has a distinct count 1..100',
  );
  t.ok(
    answers.filter((a) => a.status !== 200).every((a) => a.status === 429 && a.body === TRIAL_LIMIT),
    'every other answer is the limit error',
  );
  const period = allowanceFor(account, config.plans, config.time_zone, Date.now()).period;
  t.equal(await store.counting.usage(account.id, period.id), 100, 'Redis holds 100');
  for (const gw of gateways) t.equal(gw.child.exitCode, null, 'no gateway died');
}

t.test('three gateways on one Redis admit exactly 100 of 600 concurrent requests', async (t) => {
  const redis = await startRedis(t);
  await exactlyOnce(t, configFile({ url: redis.url }));
});

t.test('the same holds on a three-primary Redis Cluster', async (t) => {
  const cluster = await startCluster(t);
  // A Cluster's consumes carry no deadline (its nodes keep their own clocks): a call that outlasts
  // the timeout may count and be answered 503 (docs/stores.md), which 600 at once beside the bench
  // (load 17) did at 1.5 s. What is proved here is the limit's atomicity, so the timeout is ample.
  await exactlyOnce(t, configFile({ cluster: { nodes: cluster.nodes }, command_timeout_ms: scaled(3000) }));
});

t.test(
  'two gateways on a Redis Cluster answer 1,000 concurrent requests over 20 accounts with no 503, cold and warm',
  async (t) => {
    // Consumes of accounts on different slots once shared one ioredis pipeline, which the Cluster
    // refused: 744 of 1,000 got 503 on first use, about half once warm.
    const cluster = await startCluster(t);
    // A command timeout for a busy machine: the defect was a refusal at once, not a slow reply.
    const file = configFile({ cluster: { nodes: cluster.nodes }, command_timeout_ms: scaled(2000) });
    const gateways = (await Promise.all([gatewayProcess(t, file), gatewayProcess(t, file)])) as GatewayProcess[];
    const store = storeFor(t, file);
    const config = loadConfig({ file, env: {} });
    const keys: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { api_key } = await createAccount(
        store.accounts,
        config.plans,
        { plan: 'business', label: `cluster${i}`, status: 'active', limit: 1_000_000 },
        Date.now(),
      );
      keys.push(api_key);
    }
    for (const round of ['cold', 'warm', 'warm again']) {
      const statuses = await Promise.all(
        Array.from({ length: 1000 }, async (_, i) => {
          const gw = gateways[i % 2] as GatewayProcess;
          // A connection each: a kept-alive one left idle past the gateway's 5 s timeout on a busy
          // machine can be closed just as the next round reuses it (a client's race, not a 503).
          return statusOf(`${gw.base}${SIMPLE}?api_key=${keys[i % 20]}`);
        }),
      );
      const tally: Record<number, number> = {};
      for (const s of statuses) tally[s] = (tally[s] ?? 0) + 1;
      t.same(tally, { 200: 1000 }, `${round}: 1,000 × 200`);
    }
  },
);

t.test('changes made on one gateway reach the others within a second', async (t) => {
  const redis = await startRedis(t);
  const file = configFile({ url: redis.url });
  const [a, b] = (await Promise.all([gatewayProcess(t, file), gatewayProcess(t, file)])) as [
    GatewayProcess,
    GatewayProcess,
  ];
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(a.admin + path, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  const status = (gw: GatewayProcess, key: string) => fetch(`${gw.base}${SIMPLE}?api_key=${key}`).then((r) => r.status);
  const within = (ms: number, cond: () => Promise<boolean>) =>
    waitFor('the change', cond, ms).then(
      () => true,
      () => false,
    );

  const created = await admin('POST', '/admin/accounts', { plan: 'starter' });
  t.equal(created.status, 201);
  const { id } = created.body.account;
  const key = created.body.api_key as string;
  t.equal(await status(b, key), 200, 'an account created on A works on B at once');

  t.equal((await admin('PATCH', `/admin/accounts/${id}`, { status: 'inactive' })).status, 200);
  t.ok(await within(1000, async () => (await status(b, key)) === 403), 'deactivation reaches B within 1 s');
  await admin('PATCH', `/admin/accounts/${id}`, { status: 'active' });
  t.ok(await within(1000, async () => (await status(b, key)) === 200), 'reactivation reaches B within 1 s');

  const rotated = await admin('POST', `/admin/accounts/${id}/rotate-key`);
  t.equal(await status(a, key), 401, 'A refuses the old key at once');
  t.ok(await within(1000, async () => (await status(b, key)) === 401), 'B refuses the old key within 1 s');
  t.equal(await status(b, rotated.body.api_key), 200);

  const published = await admin('PUT', '/admin/prices', {
    effective_date: '2026-10-07',
    coastal: { petrol_93: null, petrol_95: '25.11', diesel_50ppm: '27.00', diesel_500ppm: '26.90' },
    inland: { petrol_93: '25.80', petrol_95: '25.95', diesel_50ppm: '27.80', diesel_500ppm: '27.70' },
  });
  t.equal(published.status, 201);
  const newest = async () =>
    ((await (await fetch(`${b.base}${SIMPLE}?api_key=${rotated.body.api_key}`)).json()) as { effective_date: string })
      .effective_date;
  t.equal(published.body.status, 'current', 'its date has passed and it is the latest');
  t.ok(await within(1000, async () => (await newest()) === '2026-10-07'), 'a published set reaches B within 1 s');

  const later = {
    effective_date: '2031-01-01',
    coastal: published.body.price_set.coastal,
    inland: published.body.price_set.inland,
  };
  t.equal((await admin('PUT', '/admin/prices', later)).body.status, 'scheduled');
  const scheduledOnB = async () =>
    ((await (await fetch(`${b.admin}/admin/prices`)).json()) as { scheduled: unknown[] }).scheduled.length;
  t.ok(await within(1000, async () => (await scheduledOnB()) === 1));
  t.equal((await admin('DELETE', '/admin/prices/2031-01-01')).status, 200);
  t.ok(await within(1000, async () => (await scheduledOnB()) === 0), 'a cancelled set leaves B within 1 s');

  // B serves the key under load while A deletes the account.
  const during: number[] = [];
  let stop = false;
  const loader = async () => {
    while (!stop) during.push(await status(b, rotated.body.api_key));
  };
  const load = Promise.all([loader(), loader(), loader()]);
  await waitFor('B serving under load', () => during.includes(200), 5000);
  t.equal((await admin('DELETE', `/admin/accounts/${id}`)).status, 200);
  t.ok(
    await within(1000, async () => (await status(b, rotated.body.api_key)) === 401),
    'a deleted account is refused on B within 1 s',
  );
  stop = true;
  await load;
  t.ok(during.includes(200), 'B served it before');
  t.same(
    during.filter((s) => s !== 200 && s !== 401),
    [],
    'B answered only 200 or 401 meanwhile',
  );
  t.equal((await admin('DELETE', `/admin/accounts/${id}`)).status, 404);
});

t.test(
  'Redis dying mid-load: every answer is a success or the 503 body within 1 s, and service comes back by itself',
  async (t) => {
    const redis = await startRedis(t);
    const file = configFile({ url: redis.url, command_timeout_ms: 300 });
    const gateways = (await Promise.all([gatewayProcess(t, file), gatewayProcess(t, file)])) as GatewayProcess[];
    const store = storeFor(t, file);
    const config = loadConfig({ file, env: {} });
    const { account, api_key } = await createAccount(
      store.accounts,
      config.plans,
      { plan: 'enterprise', label: 'faults', status: 'active', limit: 1_000_000 },
      Date.now(),
    );
    const stored = await store.accounts.getAccount(account.id);

    const results: Array<{ status: number; body: string; ms: number; id: string | null }> = [];
    let stop = false;
    const loader = async (gw: GatewayProcess) => {
      for (let i = 0; i < 2000 && !stop; i++) {
        const start = Date.now();
        const r = await fetch(`${gw.base}${SIMPLE}?api_key=${api_key}`);
        results.push({
          status: r.status,
          body: await r.text(),
          ms: Date.now() - start,
          id: r.headers.get('x-request-id'),
        });
      }
    };
    const load = Promise.all(gateways.flatMap((gw) => [loader(gw), loader(gw), loader(gw)]));
    await waitFor('successes before the outage', () => results.some((r) => r.status === 200), 5000);
    await redis.stop();
    await waitFor('answers during the outage', () => results.filter((r) => r.status === 503).length >= 20, 10_000);
    stop = true;
    await load;

    const unavailable = results.filter((r) => r.status === 503);
    t.ok(unavailable.length > 0, 'some requests met the outage');
    t.ok(results.filter((r) => r.status === 200).length > 0, 'some succeeded before it');
    t.ok(
      unavailable.every(
        (r) => r.body === `{"success":false,"message":"Service temporarily unavailable.","ref":"${r.id}"}`,
      ),
    );
    t.same(
      results.filter((r) => r.status !== 200 && r.status !== 503),
      [],
      'nothing but successes and 503s',
    );
    t.ok(
      Math.max(...results.map((r) => r.ms)) < scaled(1000),
      `slowest answer ${Math.max(...results.map((r) => r.ms))} ms`,
    );
    const ready = await fetch(`${gateways[0]?.base}/readyz`);
    t.equal(ready.status, 503, '/readyz reports the outage');

    // Redis comes back empty (no persistence in tests): the account is restored as an operator's
    // backup would; the gateways reload the price history themselves.
    await redis.start();
    // The test's own connection reconnects in its own time, like the gateways'.
    await waitFor(
      'the account restored',
      () => store.accounts.createAccount(stored as NonNullable<typeof stored>).then(() => true),
      10_000,
      { every: 100 },
    );
    for (const gw of gateways) {
      const ok = async (path: string) => (await fetch(`${gw.base}${path}`)).status === 200;
      await waitFor('a success again', () => ok(`${SIMPLE}?api_key=${api_key}`), 10_000, { every: 100 });
      t.pass('requests succeed again without restarting the gateway');
      // /readyz asks the store at most once a second, so it may lag the recovery by that much.
      await waitFor('/readyz ready', () => ok('/readyz'), 3000, { every: 100 });
      t.pass('/readyz recovers');
      t.equal(gw.child.exitCode, null, 'no gateway died');
    }
  },
);

t.test(
  'the invalid-key throttle is shared: a scanner spreading its tries over two gateways is blocked on both',
  async (t) => {
    const redis = await startRedis(t);
    const settings = {
      store: redis.store,
      log: { access: false },
      limits: { invalid_key_throttle: { max_attempts: 4, window_s: 60, block_s: 30 } },
    };
    const gateways = [await startGateway(t, settings), await startGateway(t, settings)];
    const scan = (gw: TestGateway): Promise<number> =>
      fetch(`${gw.base}${SIMPLE}?api_key=nonsense`).then((r) => r.status);
    for (const gw of [...gateways, ...gateways.slice(0, 1)]) t.equal(await scan(gw), 401, 'an invalid key: 401');
    // Each gateway has seen fewer than 4; together they have seen 4.
    t.equal(await scan(gateways[1] as TestGateway), 401, 'the fourth try');
    for (const gw of gateways)
      await waitFor('the block to reach every gateway', async () => (await scan(gw)) === 429, 2000);
    t.pass('blocked on both gateways');
    t.equal(Number(await redis.cli('DBSIZE')) < 50, true, 'Redis holds a bounded number of keys');
  },
);
