import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pino from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { keyChecksum } from '../../src/key-format.js';
import { newAccount } from '../../src/keys/accounts.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { dayOf } from '../../src/time/days.js';
import { type GatewayProcess, gatewayProcess, redisConfig, runCli, storeTimeouts } from '../helpers/cli.js';
import { getter } from '../helpers/get.js';
import { rawRequest } from '../helpers/raw.js';
import { type RedisServer, startRedis } from '../helpers/redis.js';
import { scaled } from '../helpers/wait.js';

// Attacks from outside on the consume path of gateway processes: raw pipelined requests, and a
// small account cache under accounts rotating and a flood of made-up well-formed keys.
t.jobs = 1;

const SIMPLE = '/fuel-api/api/simple-current.php';

const madeUpKey = (): string => {
  const body = randomBytes(24).toString('base64url');
  return `fpg_${body}${keyChecksum(body)}`;
};

const rssKb = (gw: GatewayProcess): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${gw.child.pid}/status`, 'utf8'))?.[1]);

/** The export's requests per account for today, as the CLI writes them. */
async function exported(file: string): Promise<Map<string, number>> {
  const config = loadConfig({ file, env: {} });
  const today = dayOf(Date.now(), config.time_zone);
  const out = await runCli(['usage', 'export', '--from', today, '--to', today, '--config', file]);
  if (out.code !== 0) throw new Error(out.stderr);
  const rows = new Map<string, number>();
  for (const line of out.stdout.trim().split('\r\n').slice(1)) {
    const cells = line.split(',');
    rows.set(cells[0] as string, Number(cells[cells.length - 1]));
  }
  return rows;
}

t.test('pipelined requests in one write: one key many times, many keys, odd headers', async (t) => {
  const redis = await startRedis(t);
  const file = redisConfig(
    { url: redis.url },
    { demo_accounts: false, limits: { invalid_key_throttle: { max_attempts: 1_000_000 } } },
  );
  const config = loadConfig({ file, env: {} });
  const store = new RedisStore({ ...config.store.redis, ...storeTimeouts() }, pino({ level: 'silent' }));
  t.teardown(() => store.close());
  const data = { plan: 'business', label: '', status: 'active', limit: 1_000_000 } as const;
  const limited = newAccount(config.plans, { ...data, limit: 30 }, Date.now());
  const many = Array.from({ length: 60 }, () => newAccount(config.plans, data, Date.now()));
  await store.accounts.seedAccounts([limited.account, ...many.map((m) => m.account)]);
  const gw = await gatewayProcess(t, file);
  const port = Number(new URL(gw.base).port);
  const get = (key: string, extra = ''): string => `GET ${SIMPLE}?api_key=${key} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;

  const one = await rawRequest(
    port,
    `${Array.from({ length: 80 }, () => get(limited.apiKey)).join('')}${get(limited.apiKey, 'Connection: close\r\n')}`,
    20_000,
  );
  const statuses = [...one.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  t.equal(statuses.length, 81, 'every pipelined request answered');
  t.equal(statuses.filter((s) => s === 200).length, 30, 'exactly the limit of one key answered 200');
  t.same(new Set(statuses), new Set([200, 429]), 'the rest refused 429');
  const remaining = [...one.matchAll(/^x-ratelimit-remaining: (\d+)/gim)].map((m) => Number(m[1]));
  t.same(
    remaining.slice(0, 30),
    Array.from({ length: 30 }, (_, i) => 29 - i),
    'remaining counts down, in order',
  );

  const spread = await rawRequest(
    port,
    `${many.map((m) => get(m.apiKey)).join('')}${get(madeUpKey(), 'Connection: close\r\n')}`,
    20_000,
  );
  const spreadStatuses = [...spread.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  t.same(spreadStatuses, [...many.map(() => 200), 401], '60 keys in one write: 200 each, the made-up key 401');

  // Odd headers: two X-API-Key headers, a key both in the query and a header, a huge header.
  const odd = await rawRequest(
    port,
    `GET ${SIMPLE} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${many[0]?.apiKey}\r\nX-API-Key: ${many[1]?.apiKey}\r\n\r\n` +
      `GET ${SIMPLE}?api_key=${many[2]?.apiKey} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${many[3]?.apiKey}\r\n\r\n` +
      `GET ${SIMPLE}?api_key=${many[4]?.apiKey}&api_key=${many[5]?.apiKey} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    20_000,
  );
  const oddStatuses = [...odd.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  t.comment(`odd headers answered ${JSON.stringify(oddStatuses)}`);
  t.ok(oddStatuses.length >= 1, 'the odd requests are answered');

  const rows = await exported(file);
  const accountsById = [limited, ...many];
  let total = 0;
  for (const m of accountsById) {
    const day = rows.get(m.account.id) ?? 0;
    total += day;
    const usage = (await (await fetch(`${gw.admin}/admin/accounts/${m.account.id}`)).json()) as {
      usage?: { requests_used?: number };
    };
    if (usage.usage?.requests_used !== undefined) t.equal(usage.usage.requests_used, day, 'admin = export');
  }
  t.equal(rows.get(limited.account.id), 30, 'the limited key counted 30');
  const okOdd = oddStatuses.filter((s) => s === 200).length;
  t.equal(total, 30 + 60 + okOdd, 'the export holds every 200 and nothing else');
});

interface CacheRig {
  redis: RedisServer;
  file: string;
  config: ReturnType<typeof loadConfig>;
  store: RedisStore;
  gateways: [GatewayProcess, GatewayProcess];
}
let cacheRig: Promise<CacheRig> | undefined;

/**
 * A Redis and two gateways with a cache of 100 accounts, the file's to end: the two cache tests
 * share them, each with accounts of its own, since a gateway's start costs ~1.7 s of CPU under
 * coverage. The cache test with the flood runs first, so its export holds its accounts alone.
 */
const cache = (): Promise<CacheRig> =>
  (cacheRig ??= (async () => {
    const redis = await startRedis(t);
    const file = redisConfig(
      { url: redis.url },
      {
        demo_accounts: false,
        limits: { account_cache: { max_entries: 100 }, invalid_key_throttle: { max_attempts: 10_000_000 } },
      },
    );
    const config = loadConfig({ file, env: {} });
    // Its seed of 2,000 accounts is one call: it outlasted 1.5 s beside the bench (load 17).
    const store = new RedisStore(
      { ...config.store.redis, ...storeTimeouts(), command_timeout_ms: scaled(5000) },
      pino({ level: 'silent' }),
    );
    t.teardown(() => store.close());
    const gateways = (await Promise.all([gatewayProcess(t, file), gatewayProcess(t, file)])) as CacheRig['gateways'];
    return { redis, file, config, store, gateways };
  })());

t.test(
  'a cache of 100 under 2,000 accounts rotating and a flood of made-up keys: exact counts, nothing added to Redis',
  async (t) => {
    const { redis, file, config, store, gateways } = await cache();
    const data = { plan: 'business', label: '', status: 'active', limit: 1_000_000 } as const;
    const accounts = Array.from({ length: 2000 }, () => newAccount(config.plans, data, Date.now()));
    await store.accounts.seedAccounts(accounts.map((m) => m.account));
    const http = getter();
    t.teardown(http.close);
    const ok = new Map<string, number>();
    const tally: Record<string, number> = {};
    let n = 0;
    const round = async (count: number, flood: boolean): Promise<void> => {
      const worker = async (): Promise<void> => {
        while (n < count) {
          const i = n++;
          const gw = gateways[i % 2] as GatewayProcess;
          const a = accounts[(i * 7919) % accounts.length] as (typeof accounts)[number];
          const key = flood && i % 2 === 1 ? madeUpKey() : a.apiKey;
          const r = await http.get(`${gw.base}${SIMPLE}?api_key=${key}`);
          tally[r.status] = (tally[r.status] ?? 0) + 1;
          if (r.status === 200) ok.set(a.account.id, (ok.get(a.account.id) ?? 0) + 1);
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
    };
    // 7919 is prime to 2,000: 2,000 requests visit every account once, and a flood's 2,000 real
    // keys (every other request) every other account twice: ten times the cache's room a round.
    await round(2_000, false);
    const rssBefore = gateways.map(rssKb);
    const keysBefore = Number((await redis.cli('DBSIZE')).trim());
    n = 0;
    await round(4_000, true);
    const rssFlooded = gateways.map(rssKb);
    n = 0;
    await round(4_000, true);
    const rssAfter = gateways.map(rssKb);
    const keysAfter = Number((await redis.cli('DBSIZE')).trim());
    t.comment(
      `statuses ${JSON.stringify(tally)}; RSS kB ${rssBefore} -> ${rssFlooded} -> ${rssAfter}; Redis keys ${keysBefore} -> ${keysAfter}`,
    );
    t.same(Object.keys(tally).sort(), ['200', '401'], 'only 200 and, for made-up keys, 401');
    t.equal(tally[401], 4_000, 'every made-up key refused');
    t.ok(keysAfter <= keysBefore + 10, 'made-up keys add nothing to Redis');
    // RSS is reported, not bounded: beside the suite the collector's timing moved it by more than
    // the records a flood could add (a bound of 30 MB failed once at load 8). The key records'
    // own bound is held in-process (test/keys/key-hashes.test.ts).
    const rows = await exported(file);
    let wrong = 0;
    for (const m of accounts) if ((rows.get(m.account.id) ?? 0) !== (ok.get(m.account.id) ?? 0)) wrong++;
    t.equal(wrong, 0, 'every account exported with exactly its 200s');
    t.equal(
      [...rows.values()].reduce((s, v) => s + v, 0),
      tally[200],
      'the export sums to the 200s',
    );
  },
);

t.test(
  'an account changed on another gateway while its entry was dropped for room: the miss from the copy serves the change',
  async (t) => {
    const {
      file,
      config,
      store,
      gateways: [a, b],
    } = await cache();
    const data = { plan: 'business', label: '', status: 'active', limit: 1_000_000 } as const;
    const target = newAccount(config.plans, { ...data, limit: 5 }, Date.now());
    // More than the cache's 100, so the target's entry is dropped for room; fewer than the 200 newest
    // keys whose records a gateway keeps at least (key-hashes.ts: two generations, 4 per entry), so
    // its record keeps the copy. At 400 the record went too, and the miss never read the copy.
    const others = Array.from({ length: 150 }, () => newAccount(config.plans, data, Date.now()));
    await store.accounts.seedAccounts([target.account, ...others.map((m) => m.account)]);
    const http = getter();
    t.teardown(http.close);
    const status = async (key: string): Promise<number> => (await http.get(`${a.base}${SIMPLE}?api_key=${key}`)).status;
    // Every other account once: the target's entry is dropped for room, its key record keeps the copy.
    const evict = async (): Promise<void> => {
      for (let i = 0; i < others.length; i += 20)
        await Promise.all(others.slice(i, i + 20).map((m) => status(m.apiKey)));
    };
    const admin = (method: string, path: string, body?: unknown) =>
      fetch(b.admin + path, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
    const id = target.account.id;

    t.equal(await status(target.apiKey), 200, 'first request');
    await evict();
    t.equal((await admin('PATCH', `/admin/accounts/${id}`, { status: 'inactive' })).status, 200);
    t.equal(await status(target.apiKey), 403, 'deactivated while dropped: refused');
    t.equal((await admin('PATCH', `/admin/accounts/${id}`, { status: 'active' })).status, 200);
    t.equal(await status(target.apiKey), 200, 'active again');
    await evict();
    t.equal((await admin('PATCH', `/admin/accounts/${id}`, { limit: 2 })).status, 200);
    t.equal(await status(target.apiKey), 429, 'limit lowered below its use while dropped: refused');
    t.equal((await admin('PATCH', `/admin/accounts/${id}`, { limit: 5 })).status, 200);
    t.equal(await status(target.apiKey), 200, 'limit raised again');
    await evict();
    const rotated = await admin('POST', `/admin/accounts/${id}/rotate-key`);
    t.equal(rotated.status, 200);
    t.equal(await status(target.apiKey), 401, 'key rotated while dropped: the old key is refused');
    const fresh = rotated.body.api_key as string;
    t.equal(await status(fresh), 200, 'the new key serves');
    const rows = await exported(file);
    t.equal(rows.get(id) ?? 0, 4, 'the four 200s counted, nothing refused');
    await evict();
    t.equal((await admin('DELETE', `/admin/accounts/${id}`)).status, 200);
    t.equal(await status(fresh), 401, 'deleted while dropped: refused');
  },
);
