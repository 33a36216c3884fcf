import { Agent, request } from 'node:http';
import pino from 'pino';
import t, { type Test } from 'tap';
import { MAX_BATCH } from '../../src/store/counting/redis-batch.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import type { ConsumeSpec, StoredAccount } from '../../src/store/store.js';
import { consumeSpec, storedAccount } from '../helpers/accounts.js';
import { adminCall } from '../helpers/admin.js';
import { startGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { scaled, waitFor } from '../helpers/wait.js';
import { DAY } from '../store/contract/fixtures.js';

/** Redis' clock measured, so each script call carries a deadline (until then the store sends a TIME of its own each second). */
const clockMeasured = (store: RedisStore): Promise<number> =>
  waitFor("Redis' clock measured, so each script call carries a deadline", () => store.clockKnown(), scaled(5000));

const SIMPLE = '/fuel-api/api/simple-current.php';

/**
 * A gateway on the Redis at `url` whose own background work stays out of the counted windows.
 * The webhook worker looks for due deliveries once a second by default, with a script call of
 * its own: on a busy machine a counted window can take longer than that (seen with two test
 * files at once), so it looks once an hour here and the counts are the requests' alone.
 */
const quietGateway = (t: Test, url: string) =>
  startGateway(t, {
    store: { type: 'redis', redis: { url } },
    log: { access: false },
    webhooks: { poll_interval_ms: 3_600_000 },
  });

/**
 * Redis's own count of the commands it ran, by command name. With `scripts`, the script calls
 * expected: each makes one TIME, and up to two more TIMEs are the store's own measurements of
 * Redis' clock (every minute, and each second while a busy host measures it imprecisely: seen
 * beside the bench), reported as `scripts` so that any other extra command still shows.
 */
async function commandCounts(
  cli: (...args: string[]) => Promise<string>,
  scripts?: number,
): Promise<Record<string, number>> {
  const out = await cli('INFO', 'commandstats');
  const counts: Record<string, number> = {};
  for (const line of out.split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (m) counts[m[1] as string] = Number(m[2]);
  }
  delete counts['config|resetstat'];
  const time = counts['time'];
  if (scripts !== undefined && time !== undefined && time > scripts && time <= scripts + 2) counts['time'] = scripts;
  return counts;
}

t.test('a warm metered request costs Redis exactly one command: the consume script', async (t) => {
  const redis = await startRedis(t);
  const gw = await quietGateway(t, redis.url);
  const { api_key } = (await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' })).body;
  t.equal((await gw.get(`${SIMPLE}?api_key=${api_key}`)).status, 200, 'first request loads the account');
  // Until Redis' clock is measured the store tries again each second, with a TIME of its own.
  const store = gw.app.store as RedisStore;
  await clockMeasured(store);
  await redis.cli('CONFIG', 'RESETSTAT');
  for (let i = 0; i < 25; i++)
    t.equal((await gw.get(`/fuel-api/api/${i % 2 ? 'current' : 'simple-current'}.php?api_key=${api_key}`)).status, 200);
  // Redis also counts the calls the script makes inside itself (TIME for its deadline, HMGET
  // account, INCR the counter; the day is marked in the ledger by the first request); any extra
  // command sent by the gateway would raise one of these above 25 or add one.
  const counts = await commandCounts(redis.cli, 25);
  t.same(counts, { evalsha: 25, time: 25, hmget: 25, incr: 25 }, 'one EVALSHA per request and nothing else');
});

/** A gateway on Redis whose account cache holds `entries` accounts, and nothing else at work. */
const smallCache = (t: Test, url: string, entries: number) =>
  startGateway(t, {
    store: { type: 'redis', redis: { url } },
    log: { access: false },
    webhooks: { poll_interval_ms: 3_600_000 },
    limits: { account_cache: { max_entries: entries } },
  });

t.test(
  'a request for an account the cache dropped for room costs Redis one command: the consume script, whose reply caches it again',
  async (t) => {
    const redis = await startRedis(t);
    // One account cached: two keys taken in turn each find theirs dropped for the other.
    const gw = await smallCache(t, redis.url, 1);
    const made = [];
    for (let i = 0; i < 2; i++) made.push((await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' })).body);
    const keys = made.map((a) => a.api_key as string);
    for (const key of keys) t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 200, 'first sight loads it');
    const store = gw.app.store as RedisStore;
    await clockMeasured(store);
    await redis.cli('CONFIG', 'RESETSTAT');
    for (let i = 0; i < 20; i++) {
      const r = await gw.get(`${SIMPLE}?api_key=${keys[i % 2]}`);
      t.equal(r.status, 200);
      t.equal(r.headers.get('x-ratelimit-remaining'), String(2000 - 2 - Math.floor(i / 2)), 'counted exactly');
    }
    t.same(
      await commandCounts(redis.cli, 20),
      { evalsha: 20, time: 20, hmget: 20, incr: 20, hgetall: 20 },
      'no GET of the key hash, no HGETALL before the consume: the account comes back in its reply',
    );
    await redis.cli('CONFIG', 'RESETSTAT');
    t.equal((await gw.get(`${SIMPLE}?api_key=${keys[1]}`)).status, 200);
    const { time: _, ...warm } = await commandCounts(redis.cli);
    t.same(warm, { evalsha: 1, hmget: 1, incr: 1 }, 'the account the reply brought back is cached: warm');
    // Changed while dropped: the consume from the dropped copy counts nothing, the slow path decides.
    t.equal(
      (await adminCall(gw, 'PATCH', `/admin/accounts/${made[0].account.id}`, { status: 'inactive' })).status,
      200,
    );
    t.equal((await gw.get(`${SIMPLE}?api_key=${keys[0]}`)).status, 403, 'the edit is seen');
    await adminCall(gw, 'PATCH', `/admin/accounts/${made[0].account.id}`, { status: 'active' });
    const again = await gw.get(`${SIMPLE}?api_key=${keys[0]}`);
    t.equal(again.headers.get('x-ratelimit-remaining'), String(2000 - 11 - 1), 'and nothing was counted by it');
  },
);

t.test(
  'a rotation over twice as many accounts as the cache holds (200,000 over the 100,000 of issue 43): every miss is one EVALSHA, counted exactly',
  async (t) => {
    const redis = await startRedis(t);
    // Three entries, six accounts taken in turn: every request finds its account dropped for room.
    const gw = await smallCache(t, redis.url, 3);
    const keys: string[] = [];
    for (let i = 0; i < 6; i++)
      keys.push((await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' })).body.api_key as string);
    for (const key of keys) t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 200, 'first sight loads it');
    await clockMeasured(gw.app.store as RedisStore);
    await redis.cli('CONFIG', 'RESETSTAT');
    const rounds = 3;
    for (let i = 0; i < rounds * keys.length; i++) {
      const r = await gw.get(`${SIMPLE}?api_key=${keys[i % keys.length]}`);
      t.equal(r.status, 200);
      t.equal(
        r.headers.get('x-ratelimit-remaining'),
        String(2000 - 2 - Math.floor(i / keys.length)),
        'counted exactly',
      );
    }
    const n = rounds * keys.length;
    t.same(
      await commandCounts(redis.cli, n),
      // HGETALL: the account each miss's reply carries (ConsumeSpec.load); the day is marked.
      { evalsha: n, time: n, hmget: n, incr: n, hgetall: n },
      'no GET of the key hash, no HGETALL before the consume: each key record kept what a consume needs',
    );
  },
);

t.test('a warm conditional request answered 304 costs Redis one read of the counter, and counts nothing', async (t) => {
  const redis = await startRedis(t);
  const gw = await quietGateway(t, redis.url);
  const { api_key } = (await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' })).body;
  const etag = (await gw.get(`${SIMPLE}?api_key=${api_key}`)).headers.get('etag') as string;
  await redis.cli('CONFIG', 'RESETSTAT');
  const started = Date.now();
  for (let i = 0; i < 25; i++) {
    const r = await gw.get(`${SIMPLE}?api_key=${api_key}`, { headers: { 'If-None-Match': etag } });
    t.equal(r.status, 304);
    t.equal(r.headers.get('x-ratelimit-remaining'), '1999');
  }
  // No script runs here, so a TIME is the store measuring Redis' clock: once a second until a
  // measurement is quick, which on a busy machine may take the whole loop. No request's command.
  const { time = 0, ...counts } = await commandCounts(redis.cli);
  const seconds = Math.ceil((Date.now() - started) / 1000) + 1;
  t.ok(time <= seconds, `${time} clock measurements in ${seconds} s at most`);
  t.equal(
    Object.values(counts).reduce((a, b) => a + b, 0),
    25,
    `one command per request: ${JSON.stringify(counts)}`,
  );
  t.notOk(counts.incr ?? counts.evalsha ?? counts.incrby, 'no counting');
});

t.test(
  'consumes issued in one event-loop turn reach Redis as one EVALSHA per MAX_BATCH, each answered on its own',
  async (t) => {
    const redis = await startRedis(t);
    const store = new RedisStore(
      { url: redis.url, key_prefix: 'batch:', command_timeout_ms: 500, connect_timeout_ms: 2000 },
      pino({ level: 'silent' }),
    );
    t.teardown(() => store.close());
    const accounts: StoredAccount[] = [];
    for (let i = 0; i < 20; i++) {
      const a = storedAccount({ status: i === 3 ? 'inactive' : 'active', label: 'batch' });
      await store.accounts.createAccount(a);
      accounts.push(a);
    }
    const spec = (a: StoredAccount, over: Partial<ConsumeSpec> = {}): ConsumeSpec =>
      consumeSpec(a, { limit: 2, ...over });
    // The script's first call on a connection is an EVAL that loads it; EVALSHA after that.
    t.same(await store.counting.consume(spec(accounts[0] as StoredAccount, { periodId: 'warm-up' }), DAY), {
      kind: 'ok',
      used: 1,
    });
    await redis.cli('CONFIG', 'RESETSTAT');
    const callsBefore = store.consumeCalls();
    const first = accounts[0] as StoredAccount;
    const results = await Promise.all([
      ...accounts.map((a) => store.counting.consume(spec(a), DAY)),
      // The same account three more times in the same batch, limit 2: counted in order.
      store.counting.consume(spec(first), DAY),
      store.counting.consume(spec(first), DAY),
      store.counting.consume(spec(first, { revision: 7 }), DAY),
    ]);
    // 23 requests: a full batch sent as soon as it fills, the rest on the turn's flush.
    const calls = Math.ceil(23 / MAX_BATCH);
    t.equal(store.consumeCalls() - callsBefore, calls, `${calls} script calls`);
    t.same(
      await commandCounts(redis.cli, calls),
      // 21 counted, of which one over the limit and taken back (DECR); 19 new counters get an
      // expiry; the 19 first of a period mark their day (HGETALL finds no mark and no record; HSET
      // the mark, HSET the account's hint) and write its record (HSET it, expire it, index it:
      // ZREMRANGEBYSCORE, ZADD, ZRANGE, expiry); the 20th, of a marked day, writes nothing more.
      // The first account's three more requests share one HMGET in their call (lua.ts READ).
      {
        evalsha: calls,
        time: calls,
        hmget: 21,
        incr: 21,
        decr: 1,
        pexpireat: 19 * 3,
        hgetall: 19,
        hset: 19 * 3,
        zremrangebyscore: 19,
        zadd: 19,
        zrange: 19,
      },
      'EVALSHAs carrying 23 requests',
    );
    t.same(
      results.slice(0, 20),
      accounts.map((_, i) => (i === 3 ? { kind: 'inactive' } : { kind: 'ok', used: 1 })),
      'each request got its own answer',
    );
    t.same(
      results.slice(20),
      [{ kind: 'ok', used: 2 }, { kind: 'exhausted', used: 2 }, { kind: 'changed' }],
      'independent checks, in order',
    );
  },
);

t.test('concurrent metered requests cost at most one EVALSHA per batch', async (t) => {
  const redis = await startRedis(t);
  const gw = await quietGateway(t, redis.url);
  const keys: string[] = [];
  for (let i = 0; i < 32; i++)
    keys.push((await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' })).body.api_key as string);
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  t.teardown(() => agent.destroy());
  const get = (key: string): Promise<number> =>
    new Promise((resolve, reject) =>
      request(`${gw.base}${SIMPLE}?api_key=${key}`, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
        .on('error', reject)
        .end(),
    );
  t.same(new Set(await Promise.all(keys.map(get))), new Set([200]), 'accounts loaded, sockets open');
  const store = gw.app.store as RedisStore;
  // On a busy host the first TIME may take too long to trust; the store measures again each second.
  await clockMeasured(store);
  await redis.cli('CONFIG', 'RESETSTAT');
  const callsBefore = store.consumeCalls();
  let statuses: number[] = [];
  for (let round = 0; round < 10; round++) statuses = statuses.concat(await Promise.all(keys.map(get)));
  const calls = store.consumeCalls() - callsBefore;
  const counts = await commandCounts(redis.cli);
  t.equal(statuses.filter((s) => s === 200).length, 320, 'every request served');
  t.equal(counts['evalsha'], calls, `one EVALSHA per batch (${calls} batches)`);
  t.ok(calls < 320, `requests shared script calls (${calls} calls for 320 requests)`);
  t.same(
    { hmget: counts['hmget'], incr: counts['incr'] },
    { hmget: 320, incr: 320 },
    'each request checked and counted once, its day already marked',
  );
  t.equal(counts['time'], calls, 'one TIME (the deadline) inside each script call');
  t.same(Object.keys(counts).sort(), ['evalsha', 'hmget', 'incr', 'time'], 'and nothing else');
});
