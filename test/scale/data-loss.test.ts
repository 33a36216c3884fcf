import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { generateKey } from '../../src/keys/key-generator.js';
import { adminCall } from '../helpers/admin.js';
import { gatewayProcess, runCli } from '../helpers/cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { scaled, sleep, waitFor } from '../helpers/wait.js';

// Its tests share nothing and spend most of their time waiting: they run 2 at a time.
t.jobs = 2;

const SIMPLE = '/fuel-api/api/simple-current.php';
const LATEST = '2026-09-02';

t.test(
  'Redis restarted empty under two gateways: the loss is logged, measured and in /readyz, keys gone unknown are not throttled, and the re-seed serves only the latest set as current',
  async (t) => {
    const redis = await startRedis(t);
    const settings = {
      store: { type: 'redis', redis: { url: redis.url, command_timeout_ms: scaled(300) } },
      log: { access: false },
    };
    const gateways = [await startGateway(t, settings), await startGateway(t, settings)];
    const [a, b] = gateways as [TestGateway, TestGateway];
    const { api_key } = (await adminCall(a, 'POST', '/admin/accounts', { plan: 'starter' })).body;
    for (const gw of gateways) t.equal((await gw.get(`${SIMPLE}?api_key=${api_key}`)).status, 200);
    const ready = (await (await a.get('/readyz')).json()) as Record<string, unknown>;
    t.notOk('store_data_lost' in ready, 'no loss reported before');

    // Every set either gateway serves as current while Redis restarts and the history is re-seeded.
    const seen = new Set<string | null>();
    let samples = 0;
    let watching = true;
    t.teardown(() => {
      watching = false;
    });
    const watch = (async () => {
      while (watching)
        for (const gw of gateways) {
          const r = await adminCall(gw, 'GET', '/admin/prices').catch(() => null);
          samples++;
          if (r?.status === 200) seen.add((r.body.current?.effective_date as string | undefined) ?? null);
        }
    })();

    await redis.stop();
    await redis.start();
    for (const gw of gateways)
      await waitFor('the loss to be logged', () => /redis lost its data/.test(gw.logs()), 10_000);
    t.pass('both gateways logged the loss');
    await waitFor(
      'the history to be re-seeded',
      async () => (await adminCall(b, 'GET', '/admin/prices')).body.current?.effective_date === LATEST,
      10_000,
    );
    // A few samples more, taken after the re-seed, in case another set became current after it.
    const reseededAt = samples;
    await waitFor('samples after the re-seed', () => samples >= reseededAt + 6, 2000);
    watching = false;
    await watch;
    t.same(
      [...seen].filter((d) => d !== LATEST && d !== null),
      [],
      `only ${LATEST} was ever current (${samples} samples)`,
    );

    for (const gw of gateways) {
      t.match((await adminCall(gw, 'GET', '/metrics')).body, /^fuel_gateway_store_data_lost 1$/m, 'metric: lost');
      t.match(await (await gw.get('/readyz')).json(), { store_data_lost: true }, '/readyz reports the loss');
    }
    // The key is unknown now; well over the throttle's 20 attempts from one address.
    const statuses = new Set<number>();
    for (let i = 0; i < 30; i++) statuses.add((await a.get(`${SIMPLE}?api_key=${api_key}`)).status);
    t.same([...statuses], [401], '401 for a key the loss made unknown, never throttled');
    t.match(a.logs(), /"level":50[^\n]*redis lost its data/, 'logged as an error');
  },
);

t.test(
  'after Redis restarted empty, unknown keys count towards the throttle again once paused_after_data_loss_s has passed, without a restart',
  async (t) => {
    const redis = await startRedis(t);
    const pauseS = Math.ceil(scaled(3000) / 1000);
    const file = join(tempDir('fpg-data-loss-'), 'gateway.yaml');
    writeFileSync(
      file,
      JSON.stringify({
        store: { type: 'redis', redis: { url: redis.url, connect_timeout_ms: scaled(2000) } },
        log: { access: false },
        demo_accounts: false,
        limits: {
          invalid_key_throttle: { max_attempts: 5, window_s: 600, block_s: 600, paused_after_data_loss_s: pauseS },
        },
      }),
    );
    const gw = await gatewayProcess(t, file);
    const created = await runCli(['accounts', 'create', '--plan', 'starter', '--config', file]);
    t.equal(created.code, 0, 'account created through the CLI');
    const key = (JSON.parse(created.stdout) as { api_key: string }).api_key;
    const status = async (k: string): Promise<number> => {
      const r = await fetch(`${gw.base}${SIMPLE}?api_key=${k}`);
      await r.arrayBuffer();
      return r.status;
    };
    t.equal(await status(key), 200);

    await redis.stop();
    await redis.start();
    await gw.waitFor(/redis lost its data/, 10_000);
    const lostAt = Date.now();
    // The customer's key, gone with the data, and made-up ones: twice the limit, and never a 429.
    const during = new Set<number>();
    for (let i = 0; i < 10; i++) during.add(await status(i % 2 === 0 ? key : generateKey()));
    const took = Date.now() - lostAt;
    t.ok(took < pauseS * 1000, `sent within the pause (${took} ms of ${pauseS} s)`);
    t.same([...during], [401], 'while paused, unknown keys get 401 and do not count');

    // The passing of time is what is set up here: the pause runs out on the gateway's own clock.
    await sleep(pauseS * 1000 - (Date.now() - lostAt) + 200);
    const after: number[] = [];
    for (let i = 0; i < 6; i++) after.push(await status(generateKey()));
    t.same(after, [401, 401, 401, 401, 401, 429], 'after the pause the fifth unknown key blocks the address again');
    t.equal(gw.child.exitCode, null, 'the same gateway process, never restarted');
  },
);
