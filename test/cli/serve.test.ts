import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { gatewayProcess, privateConfig, serve } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

t.test('first run prints a curl line that answers with the simple envelope and real prices', async (t) => {
  const gw = serve(t);
  const [, url] = await gw.waitFor(/curl '(http:\/\/[^']+)'/);
  const r = await fetch(url as string);
  t.equal(r.status, 200);
  const body = (await r.json()) as {
    success: boolean;
    effective_date: string;
    fuel_prices: { inland: { petrol_95: string } };
    usage: { plan_type: string; requests_used: number };
  };
  t.equal(body.success, true);
  t.match(body.effective_date, /^\d{4}-\d{2}-\d{2}$/);
  t.match(body.fuel_prices.inland.petrol_95, /^\d+\.\d{2}$/);
  t.equal(body.usage.plan_type, 'developer');
  t.equal(body.usage.requests_used, 1);
  t.equal(await gw.stop('SIGTERM'), 0, 'SIGTERM drains and exits cleanly');
  const key = new URL(url as string).searchParams.get('api_key') as string;
  const logLines = gw
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'));
  t.ok(logLines.length > 0, 'logs are JSON lines');
  t.notOk(
    logLines.some((l) => l.includes(key)),
    'the key is in no log line',
  );
});

t.test('a bad config stops the start with the problem named', async (t) => {
  const gw = serve(t, [], { PORT: '99999' });
  t.equal(await new Promise((r) => gw.child.on('exit', r)), 1);
  t.match(gw.output(), /environment PORT: listen\.public\.port: /);
});

/** The accounts in the memory-store file next to `config`. */
const accounts = (config: string): Array<{ label: string }> =>
  (
    JSON.parse(readFileSync(join(dirname(config), 'memory-store.json'), 'utf8')) as {
      accounts: Array<{ label: string }>;
    }
  ).accounts;

t.test(
  'a restart on the same state file adds no account and prints a curl line with a new key of the developer demo',
  async (t) => {
    const config = privateConfig();
    const first = serve(t, ['--config', config]);
    const [, firstUrl] = await first.waitFor(/curl '(http:\/\/[^']+)'/);
    t.equal(await first.stop('SIGTERM'), 0);
    t.same(
      accounts(config)
        .map((a) => a.label)
        .sort(),
      ['demo business', 'demo developer', 'demo enterprise', 'demo starter'],
    );
    let previous = new URL(firstUrl as string).searchParams.get('api_key') as string;
    for (const start of [2, 3]) {
      const again = serve(t, ['--config', config]);
      const [, url] = await again.waitFor(/curl '(http:\/\/[^']+)'/);
      const r = await fetch(url as string);
      t.equal(r.status, 200, `start ${start}: the printed line is answered`);
      t.equal(((await r.json()) as { usage: { plan_type: string } }).usage.plan_type, 'developer');
      const old = new URL(url as string);
      old.searchParams.set('api_key', previous);
      t.not((await fetch(old)).status, 200, `start ${start}: the earlier start's key no longer works`);
      previous = new URL(url as string).searchParams.get('api_key') as string;
      t.equal(await again.stop('SIGTERM'), 0);
      t.equal(accounts(config).length, 4, `start ${start}: still the four demo accounts`);
    }
  },
);

t.test('a store that has accounts but no demo account gets the developer demo account only, once', async (t) => {
  const config = privateConfig({ demo_accounts: false });
  const first = serve(t, ['--config', config]);
  const [line] = await first.waitFor(/^\{.*"msg":"admin listener ready".*$/m);
  const admin = `http://127.0.0.1:${(JSON.parse(line) as { address: { port: number } }).address.port}`;
  const created = await fetch(`${admin}/admin/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'starter', label: 'a customer' }),
  });
  t.equal(created.status, 201);
  t.equal(await first.stop('SIGTERM'), 0);

  const withDemo = join(dirname(config), 'with-demo.yaml');
  writeFileSync(withDemo, JSON.stringify({ store: { memory: { file: 'memory-store.json' } } }));
  for (const start of [2, 3]) {
    const again = serve(t, ['--config', withDemo]);
    const [, url] = await again.waitFor(/curl '(http:\/\/[^']+)'/);
    t.equal((await fetch(url as string)).status, 200, `start ${start}: the printed line is answered`);
    t.equal(await again.stop('SIGTERM'), 0);
    t.same(
      accounts(config)
        .map((a) => a.label)
        .sort(),
      ['a customer', 'demo developer'],
      `start ${start}: the customer and one demo account`,
    );
  }
});

t.test(
  'a second gateway on a taken port is refused before it touches the store, naming the port setting',
  async (t) => {
    // The second gateway gets a Redis of its own, empty: the first one may write to its own at any
    // time (it re-seeds a store that lost its data), so only an untouched Redis proves nothing.
    const first = await gatewayProcess(t, privateConfig({ demo_accounts: false }), {
      REDIS_URL: (await startRedis(t)).url,
    });
    const redis = await startRedis(t);
    const cases = [
      {
        env: { ADMIN_PORT: new URL(first.admin).port },
        listener: 'admin',
        setting: /ADMIN_PORT \(or listen\.admin\.port\)/,
      },
      { env: { PORT: new URL(first.base).port }, listener: 'public', setting: /PORT \(or listen\.public\.port\)/ },
    ];
    for (const { env, listener, setting } of cases) {
      const second = serve(t, ['--config', privateConfig({ demo_accounts: false })], { REDIS_URL: redis.url, ...env });
      t.equal(await new Promise((r) => second.child.on('exit', r)), 1, `${listener}: exit code 1`);
      const lines = second.output().trim().split('\n');
      t.equal(lines.length, 1, `${listener}: one line`);
      t.match(lines[0], new RegExp(`^CONFIG_INVALID: ${listener} listener: 127\\.0\\.0\\.1:\\d+ is in use`));
      t.match(lines[0], setting, `${listener}: the line says how to set its port`);
      t.equal((await redis.cli('DBSIZE')).trim(), '0', `${listener}: nothing was written to Redis`);
    }
    t.equal((await fetch(`${first.base}/healthz`)).status, 200, 'the first gateway serves on');
  },
);
