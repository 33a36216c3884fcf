import pino from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { newAccount } from '../../src/keys/accounts.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { gatewayProcess, redisConfig, runCli, storeTimeouts } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';

const USAGE = '/fuel-api/api/usage.php';
const SIMPLE = '/fuel-api/api/simple-current.php';

interface Usage {
  plan_type: string;
  requests_used: number;
  request_limit: number;
  requests_remaining: number;
  request_period: string;
}

/** What usage.php says of a key, without the fields that differ between any two accounts (ids, times). */
async function usageOf(base: string, key: string): Promise<{ status: number; usage: Usage }> {
  const r = await fetch(`${base}${USAGE}?api_key=${key}`);
  const { usage } = (await r.json()) as { usage: Usage };
  return {
    status: r.status,
    usage: {
      plan_type: usage.plan_type,
      requests_used: usage.requests_used,
      request_limit: usage.request_limit,
      requests_remaining: usage.requests_remaining,
      request_period: usage.request_period,
    },
  };
}

const simple = async (base: string, key: string): Promise<number> => {
  const r = await fetch(`${base}${SIMPLE}?api_key=${key}`);
  await r.arrayBuffer();
  return r.status;
};

t.test('accounts seeded in bulk (the bench) are served by a gateway exactly as accounts the CLI creates', async (t) => {
  const redis = await startRedis(t);
  const file = redisConfig({ url: redis.url }, { demo_accounts: false });
  const created = await runCli(['accounts', 'create', '--plan', 'starter', '--config', file]);
  t.equal(created.code, 0, 'the CLI creates an account');
  const cliKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;

  const config = loadConfig({ env: {}, overrides: { store: redis.store } });
  const store = new RedisStore({ ...config.store.redis, ...storeTimeouts() }, pino({ level: 'silent' }));
  t.teardown(() => store.close());
  const data = { plan: 'starter', label: '', status: 'active', limit: null } as const;
  // More than one script call's worth, so the batches and their order are exercised.
  const seeded = Array.from({ length: 1201 }, () => newAccount(config.plans, data, Date.now()));
  const small = newAccount(config.plans, { ...data, plan: 'enterprise', limit: 2 }, Date.now());
  await store.accounts.seedAccounts([...seeded.map((s) => s.account), small.account]);

  const cliHash = await redis.cli('HKEYS', `fpg:{acct:${JSON.parse(created.stdout).account.id}}:account`);
  const lastId = (seeded.at(-1) as (typeof seeded)[number]).account.id;
  const seededHash = await redis.cli('HKEYS', `fpg:{acct:${lastId}}:account`);
  t.same(seededHash.split('\n').sort(), cliHash.split('\n').sort(), 'the same fields in the account hash');

  const gw = await gatewayProcess(t, file);
  const keys = [
    cliKey,
    (seeded[0] as (typeof seeded)[number]).apiKey,
    (seeded.at(-1) as (typeof seeded)[number]).apiKey,
  ];
  const usage = (used: number) => ({
    status: 200,
    usage: {
      plan_type: 'starter',
      requests_used: used,
      request_limit: 2000,
      requests_remaining: 2000 - used,
      request_period: 'monthly',
    },
  });
  const before = await Promise.all(keys.map((k) => usageOf(gw.base, k)));
  t.same(before, [usage(0), usage(0), usage(0)], 'usage.php shows the plan, as for the account the CLI made');
  for (const k of keys) t.equal(await simple(gw.base, k), 200);
  const after = await Promise.all(keys.map((k) => usageOf(gw.base, k)));
  t.same(after, [usage(1), usage(1), usage(1)], 'a request counts, as for the account the CLI made');

  t.same(
    [await simple(gw.base, small.apiKey), await simple(gw.base, small.apiKey), await simple(gw.base, small.apiKey)],
    [200, 200, 429],
    'a seeded account with its own limit is counted to it and refused past it',
  );
  const listed = await runCli(['accounts', 'show', lastId, '--config', file]);
  t.equal(listed.code, 0, 'the CLI finds a seeded account');
  t.match(JSON.parse(listed.stdout), { account: { id: lastId, plan: 'starter', status: 'active', revision: 1 } });
});

t.test('seeding stops at an account whose key hash is taken, and writes nothing of it', async (t) => {
  const redis = await startRedis(t);
  const config = loadConfig({ env: {}, overrides: { store: redis.store } });
  const store = new RedisStore({ ...config.store.redis, ...storeTimeouts() }, pino({ level: 'silent' }));
  t.teardown(() => store.close());
  const data = { plan: 'starter', label: '', status: 'active', limit: null } as const;
  const first = newAccount(config.plans, data, Date.now());
  await store.accounts.seedAccounts([first.account]);
  const twin = newAccount(config.plans, data, Date.now());
  twin.account.keys = first.account.keys;
  await t.rejects(store.accounts.seedAccounts([twin.account]), { code: 'CONFLICT' });
  t.equal(await store.accounts.getAccount(twin.account.id), null, 'the refused account was not written');
  t.equal((await store.accounts.findByKeyHash(first.account.keys[0]?.key_hash ?? ''))?.id, first.account.id);
});
