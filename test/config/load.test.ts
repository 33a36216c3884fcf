import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { maskTree } from '../../src/config/mask.js';
import type { GatewayError } from '../../src/failures.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('fpg-config-');
const file = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

t.test('the defaults give PRODUCT.md plans, zone and listeners', async (t) => {
  const c = loadConfig({ env: {} });
  t.equal(c.time_zone, 'Africa/Johannesburg');
  t.same(c.listen.public, { host: '::', port: 8080 });
  t.same(c.listen.admin, { host: '127.0.0.1', port: 8081, token: '' });
  t.equal(c.store.type, 'memory');
  t.same(Object.fromEntries(Object.entries(c.plans).map(([k, p]) => [k, [p.limit, p.period]])), {
    developer: [100, 'trial'],
    starter: [2000, 'monthly'],
    business: [10000, 'monthly'],
    enterprise: [undefined, 'monthly'],
  });
  t.equal(c.plans['developer']?.trial_days, 14);
});

t.test(
  'TRUSTED_PROXIES replaces server.trusted_proxies with its comma-separated addresses, each validated',
  async (t) => {
    const c = loadConfig({ env: { TRUSTED_PROXIES: '127.0.0.1, 172.30.0.10' } });
    t.same(c.server.trusted_proxies, ['127.0.0.1', '172.30.0.10']);
    t.throws(() => loadConfig({ env: { TRUSTED_PROXIES: '127.0.0.1,not-an-ip' } }), {
      message: /environment TRUSTED_PROXIES: server\.trusted_proxies\.1: expected an IP address/,
    });
  },
);

t.test('a file layers over the defaults and the environment over both', async (t) => {
  file('mine.json', '[]');
  const f = file(
    'layer.yaml',
    'plans:\n  starter:\n    limit: 2500\n    period: monthly\nlisten:\n  public:\n    port: 9000\nprices:\n  file: mine.json\n',
  );
  const c = loadConfig({
    file: f,
    env: { PORT: '9100', ADMIN_TOKEN: 's3cret', REDIS_URL: 'redis://10.0.0.5:6380', LOG_LEVEL: 'warn' },
  });
  t.equal(c.plans['starter']?.limit, 2500);
  t.equal(c.plans['business']?.limit, 10000, 'other plans stay');
  t.equal(c.listen.public.port, 9100);
  t.equal(c.listen.admin.token, 's3cret');
  t.equal(c.store.type, 'redis', 'REDIS_URL selects the Redis store');
  t.equal(c.store.redis.url, 'redis://10.0.0.5:6380');
  t.equal(c.log.level, 'warn');
  t.equal(c.prices.file, join(dir, 'mine.json'), 'a relative price file is relative to its config file');
  const via = loadConfig({ env: { FUEL_GATEWAY_CONFIG: f } });
  t.equal(via.listen.public.port, 9000, 'FUEL_GATEWAY_CONFIG names the file too');
});

t.test('a bad file stops with one line per problem naming file and field', async (t) => {
  const f = file(
    'local.yaml',
    'plans:\n  starter:\n    limit: -5\n    period: weekly\ntime_zone: Mars/Olympus\nlisten:\n  public:\n    prot: 80\n',
  );
  const err = t.throws(() => loadConfig({ file: f, env: { ADMIN_PORT: 'eighty' } })) as GatewayError;
  t.equal(err.code, 'CONFIG_INVALID');
  const lines = err.details.map((l) => l.replace(`${dir}/`, ''));
  t.ok(
    lines.some((l) => /^local\.yaml: plans\.starter\.limit: expected a positive integer$/.test(l)),
    lines.join('\n'),
  );
  t.ok(lines.some((l) => l.startsWith('local.yaml: plans.starter.period: ')));
  t.ok(lines.some((l) => l.startsWith('local.yaml: time_zone: expected an IANA time zone')));
  t.ok(lines.some((l) => l.startsWith('local.yaml: listen.public: ') && l.includes('prot')));
  t.ok(lines.some((l) => l.startsWith('environment ADMIN_PORT: listen.admin.port: ')));
});

t.test('unreadable and non-YAML files are named', async (t) => {
  t.throws(() => loadConfig({ file: join(dir, 'missing.yaml'), env: {} }), /missing\.yaml: cannot read/);
  t.throws(() => loadConfig({ file: file('broken.yaml', 'a: [1, 2\n'), env: {} }), /broken\.yaml: not valid YAML/);
  t.throws(() => loadConfig({ file: file('list.yaml', '- 1\n'), env: {} }), /list\.yaml: expected a mapping/);
});

t.test('a plan may only convert to a known plan, and only from a trial', async (t) => {
  const f = file(
    'convert.yaml',
    'plans:\n  developer:\n    period: trial\n    limit: 100\n    converts_to: gold\n  starter:\n    period: monthly\n    limit: 1\n    converts_to: business\n',
  );
  const err = t.throws(() => loadConfig({ file: f, env: {} })) as GatewayError;
  t.match(err.message, /plans\.developer\.converts_to: unknown plan "gold"/);
  t.match(err.message, /plans\.starter\.converts_to: only a trial plan converts/);
  const toEnterprise = file(
    'to-enterprise.yaml',
    'plans:\n  developer:\n    period: trial\n    limit: 100\n    converts_to: enterprise\n',
  );
  t.throws(
    () => loadConfig({ file: toEnterprise, env: {} }),
    /plans\.developer\.converts_to: plan "enterprise" has no default limit to convert to/,
  );
  const chain = file(
    'chain.yaml',
    'plans:\n  a:\n    period: trial\n    limit: 10\n    converts_to: developer\n  developer:\n    period: trial\n    limit: 100\n    converts_to: starter\n',
  );
  t.throws(
    () => loadConfig({ file: chain, env: {} }),
    /plans\.a\.converts_to: plan "developer" converts again; conversions do not chain/,
  );
});

t.test('listener and timeout settings that cannot work together are refused', async (t) => {
  const err = t.throws(() =>
    loadConfig({ env: { PORT: '9000', ADMIN_PORT: '9000' }, overrides: { server: { headers_timeout_ms: 20000 } } }),
  ) as GatewayError;
  t.match(err.message, /listen\.admin\.port: the admin API never shares the public port/);
  t.match(err.message, /server\.headers_timeout_ms: must not exceed server\.request_timeout_ms/);
});

t.test('secrets are masked for display', async (t) => {
  const c = maskTree(loadConfig({ env: { ADMIN_TOKEN: 'tok', REDIS_URL: 'redis://user:pw@host:6379' } }));
  t.equal(c.listen.admin.token, '***');
  t.equal(c.store.redis.url, 'redis://***@host:6379');
  const s = maskTree(
    loadConfig({
      env: {},
      overrides: { store: { redis: { sentinel: { name: 'm', nodes: [{ host: 'h', port: 26379 }], password: 'pw' } } } },
    }),
  );
  t.equal(s.store.redis.sentinel?.password, '***');
});

t.test('`config check` prints the effective config, masked, or the problems and exits 1', async (t) => {
  const ok = await runCli(['config', 'check'], { ADMIN_TOKEN: 'top-secret' });
  t.equal(ok.code, 0, ok.stderr);
  const printed = JSON.parse(ok.stdout) as { listen: { admin: { token: string } }; plans: Record<string, unknown> };
  t.equal(printed.listen.admin.token, '***');
  t.notMatch(ok.stdout, 'top-secret');
  const bad = file('bad.yaml', 'plans:\n  starter:\n    limit: 0\n    period: monthly\n');
  const r = await runCli(['config', 'check', '--config', bad]);
  t.equal(r.code, 1);
  t.match(r.stderr, /bad\.yaml: plans\.starter\.limit: expected a positive integer/);
  t.equal(r.stdout, '');
  const unknown = await runCli(['frobnicate']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /unknown command/);
});

t.test('config check refuses what serve would refuse', async (t) => {
  const open = file('open-admin.yaml', 'listen:\n  admin:\n    host: 0.0.0.0\n');
  t.throws(
    () => loadConfig({ file: open, env: {} }),
    /open-admin\.yaml: listen\.admin\.host: 0\.0\.0\.0 is not loopback: set listen\.admin\.token/,
  );
  const check = await runCli(['config', 'check', '--config', open]);
  t.equal(check.code, 1, 'config check exits 1 for it too');
  t.match(check.stderr, /listen\.admin\.host: 0\.0\.0\.0 is not loopback/);
  const missing = file('missing-prices.yaml', 'prices:\n  file: nowhere.json\n');
  t.throws(
    () => loadConfig({ file: missing, env: {} }),
    /missing-prices\.yaml: prices\.file: no such file: .*nowhere\.json/,
  );
  t.doesNotThrow(
    () => loadConfig({ file: open, env: { ADMIN_TOKEN: 'Kq7_vX2mZ9pR4sT8wN1yB6cD3fG5hJ0L' } }),
    'with a strong token it is fine',
  );
});

t.test('an unknown key is reported in the file that has it, not in a later layer', async (t) => {
  const f = file('unknown-key.yaml', 'foo: 1\nlisten:\n  public:\n    bar: 2\n');
  const err = (() => {
    try {
      loadConfig({ file: f, env: { ADMIN_PORT: '9999', LOG_LEVEL: 'warn' } });
    } catch (e) {
      return (e as Error).message;
    }
    return '';
  })();
  t.match(err, /unknown-key\.yaml: \(top level\): Unrecognized key: "foo"/);
  t.match(err, /unknown-key\.yaml: listen\.public: Unrecognized key: "bar"/);
  t.notMatch(err, /environment/);
});

t.test('plans.*.converts_to is documented in the defaults', async (t) => {
  const { readFileSync } = await import('node:fs');
  t.match(readFileSync('config/default.yaml', 'utf8'), /#.*converts_to: \w+/);
});

t.test('server.workers: a count or auto, and more than one only with the Redis store', async (t) => {
  t.equal(loadConfig({ env: {} }).server.workers, 1);
  t.equal(
    loadConfig({ env: { REDIS_URL: 'redis://127.0.0.1:6379' }, overrides: { server: { workers: 'auto' } } }).server
      .workers,
    'auto',
  );
  t.equal(
    loadConfig({ env: { REDIS_URL: 'redis://127.0.0.1:6379' }, overrides: { server: { workers: 4 } } }).server.workers,
    4,
  );
  for (const workers of [2, 'auto']) {
    const err = t.throws(() => loadConfig({ env: {}, overrides: { server: { workers } } })) as GatewayError;
    t.match(err.details.join('\n'), /^overrides: server\.workers: more than one worker needs the Redis store/m);
  }
  t.throws(
    () => loadConfig({ env: {}, overrides: { server: { workers: 0 } } }),
    /server\.workers: expected a positive integer/,
  );
});
