import pino from 'pino';
import t from 'tap';
import { isGatewayError } from '../../src/failures.js';
import type { ConsumeResult } from '../../src/store/counting/interface.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { RespError, RespParser, type RespValue } from '../../src/store/redis/resp.js';
import type { ConsumeSpec, StoredAccount } from '../../src/store/store.js';
import { consumeSpec, storedAccount } from '../helpers/accounts.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { answers, scaled, sleep, waitFor } from '../helpers/wait.js';
import { DAY } from './contract/fixtures.js';

/**
 * The consume connection of the Redis store (store/redis/lean-consume.ts), against a real Redis:
 * its replies decoded as the script sent them, and the failure rules of the store (a call that
 * fails or times out is answered 503, never sent again, and counts nothing it did not answer).
 */

const log = pino({ level: 'silent' });
const COMMAND_TIMEOUT_MS = scaled(400);

t.test('the reply parser reads a reply however the socket splits it', async (t) => {
  const wire = Buffer.from(
    '*6\r\n:0\r\n:-12\r\n*4\r\n$2\r\nid\r\n$8\r\nacct_é1\r\n$0\r\n\r\n$-1\r\n+OK\r\n-EXPIRED the caller stopped\r\n*0\r\n:7\r\n',
  );
  const expected: RespValue[] = [
    [0, -12, ['id', 'acct_é1', '', null], 'OK', new RespError('EXPIRED the caller stopped'), []],
    7,
  ];
  const read = (chunks: Buffer[]): RespValue[] => {
    const out: RespValue[] = [];
    const parser = new RespParser((r) => out.push(r));
    for (const c of chunks) parser.feed(c);
    return out;
  };
  t.same(read([wire]), expected, 'whole');
  for (let cut = 1; cut < wire.length; cut++)
    t.same(read([wire.subarray(0, cut), wire.subarray(cut)]), expected, `split at ${cut}`);
  t.same(read([...wire].map((b) => Buffer.from([b]))), expected, 'one byte at a time');
  const errors = read([Buffer.from('-NOSCRIPT No matching script.\r\n')]);
  t.ok(errors[0] instanceof RespError && errors[0].message === 'NOSCRIPT No matching script.', 'an error reply');
});

t.test('every kind of answer decoded from one call, a loaded account with it', async (t) => {
  const server = await startRedis(t);
  const store = new RedisStore(
    { url: server.url, key_prefix: 'kinds:', command_timeout_ms: scaled(1000), connect_timeout_ms: 2000 },
    log,
  );
  t.teardown(() => store.close());
  const a = storedAccount({ label: 'kinds é', limit: 2 });
  const off = storedAccount({ status: 'inactive' });
  const bursty = storedAccount({ burst: { limit: 1, window_s: 60 } });
  for (const x of [a, off, bursty]) await store.accounts.createAccount(x);
  const spec = (x: StoredAccount, over: Partial<ConsumeSpec> = {}): ConsumeSpec =>
    consumeSpec(x, { limit: 2, ...over });
  const load = spec(a, { periodId: 'loaded' });
  load.load = true;
  const burst = { limit: 1, windowMs: 60_000 };
  const calls = store.consumeCalls();
  const results = await Promise.all([
    store.counting.consume(spec(a), DAY),
    store.counting.consume(spec(a), DAY),
    store.counting.consume(spec(a), DAY),
    store.counting.consume(spec(off), DAY),
    store.counting.consume(spec(a, { revision: 9 }), DAY),
    store.counting.consume(spec(bursty, { burst }), DAY),
    store.counting.consume(spec(bursty, { burst }), DAY),
    store.counting.consume(load, DAY),
  ]);
  t.equal(store.consumeCalls() - calls, 1, 'one script call');
  const loaded = results[7] as ConsumeResult & { account?: StoredAccount };
  t.same(loaded.account, await store.accounts.getAccount(a.id), 'the account as stored, decoded from the reply');
  t.same(
    results.map((r) => {
      const { account: _, ...rest } = r as ConsumeResult & { account?: unknown };
      return rest;
    }),
    [
      { kind: 'ok', used: 1 },
      { kind: 'ok', used: 2 },
      { kind: 'exhausted', used: 2 },
      { kind: 'inactive' },
      { kind: 'changed' },
      { kind: 'ok', used: 1, burst: { remaining: 0, resetMs: 60_000 } },
      { kind: 'burst', used: 1, burst: { remaining: 0, resetMs: 60_000 } },
      { kind: 'ok', used: 1 },
    ],
  );
});

/** Answers of `n` consumes sent at once: 'ok', 'exhausted', ... or '503'. */
async function burstOf(store: RedisStore, spec: ConsumeSpec, n: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: n }, () =>
      store.counting.consume(spec, DAY).then(
        (r) => r.kind,
        (err: unknown) => (isGatewayError(err, 'STORE_UNAVAILABLE') ? '503' : String(err)),
      ),
    ),
  );
}

const until = (store: RedisStore, spec: ConsumeSpec): Promise<number> =>
  waitFor(
    'consumes answered again',
    () =>
      store.counting.consume(spec, DAY).then(
        () => true,
        () => false,
      ),
    scaled(5000),
  );

t.test('a Redis killed with calls in flight: they fail with 503, are never sent again, count nothing', async (t) => {
  // Every write on disk before its reply, so a restart finds what was answered.
  const dir = tempDir('fpg-lean-');
  const server = await startRedis(t, ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir]);
  const store = new RedisStore(
    { url: server.url, key_prefix: 'kill:', command_timeout_ms: scaled(5000), connect_timeout_ms: 2000 },
    log,
  );
  t.teardown(() => store.close());
  const a = storedAccount({ label: 'kill' });
  await store.accounts.createAccount(a);
  const spec = consumeSpec(a, { limit: 1_000_000 });
  let oks = (await burstOf(store, spec, 40)).filter((k) => k === 'ok').length;
  t.equal(oks, 40);
  // Frozen first, so the calls below are written but not run; then killed while frozen.
  server.pause();
  const inFlight = burstOf(store, spec, 40);
  await sleep(50);
  const started = Date.now();
  await server.stop();
  t.same(new Set(await inFlight), new Set(['503']), 'every request of the calls in flight: 503');
  t.ok(Date.now() - started < scaled(1000), 'at once, not after the timeout');
  t.same(new Set(await burstOf(store, spec, 5)), new Set(['503']), 'while Redis is down: 503 at once');
  await server.start();
  await until(store, spec);
  oks++;
  oks += (await burstOf(store, spec, 20)).filter((k) => k === 'ok').length;
  t.equal(await store.counting.usage(a.id, spec.periodId), oks, 'Redis counted exactly the requests answered ok');
});

t.test('a frozen Redis: 503 within the timeout, and the abandoned calls count nothing once it thaws', async (t) => {
  const server = await startRedis(t);
  const store = new RedisStore(
    { url: server.url, key_prefix: 'stop:', command_timeout_ms: COMMAND_TIMEOUT_MS, connect_timeout_ms: 2000 },
    log,
  );
  t.teardown(() => store.close());
  const a = storedAccount({ label: 'stop' });
  await store.accounts.createAccount(a);
  const spec = consumeSpec(a, { limit: 1_000_000 });
  await waitFor("Redis' clock", () => store.clockKnown(), scaled(5000));
  t.same(new Set(await burstOf(store, spec, 10)), new Set(['ok']));
  server.pause();
  const started = Date.now();
  const frozen = await burstOf(store, spec, 30);
  const ms = Date.now() - started;
  t.same(new Set(frozen), new Set(['503']), 'every request: 503');
  t.ok(ms >= COMMAND_TIMEOUT_MS - 50 && ms < COMMAND_TIMEOUT_MS + scaled(300), `after the timeout (${ms} ms)`);
  server.resume();
  await until(store, spec);
  t.same(
    await burstOf(store, spec, 5),
    ['ok', 'ok', 'ok', 'ok', 'ok'],
    'later calls get their own replies, not the late ones',
  );
  t.equal(await store.counting.usage(a.id, spec.periodId), 10 + 1 + 5, 'the abandoned calls counted nothing');
});

t.test('a restarted Redis: the connection comes back by itself', async (t) => {
  const server = await startRedis(t);
  const options = {
    url: server.url,
    key_prefix: 'restart:',
    command_timeout_ms: scaled(1000),
    connect_timeout_ms: 2000,
  };
  const store = new RedisStore(options, log);
  t.teardown(() => store.close());
  const a = storedAccount({ label: 'restart' });
  await store.accounts.createAccount(a);
  t.same(await store.counting.consume(consumeSpec(a), DAY), { kind: 'ok', used: 1 });
  await server.stop();
  await server.start();
  // Redis kept nothing: the account is made again, and the script loaded again by the reconnect.
  await waitFor('the store', answers(store), scaled(5000));
  await store.accounts.createAccount(a);
  await until(store, consumeSpec(a, { periodId: 'warm' }));
  t.same(await store.counting.consume(consumeSpec(a), DAY), { kind: 'ok', used: 1 });
});

t.test('a script cache flushed under the connection: the one call Redis refused is sent again as EVAL', async (t) => {
  const server = await startRedis(t);
  const store = new RedisStore(
    { url: server.url, key_prefix: 'flush:', command_timeout_ms: scaled(1000), connect_timeout_ms: 2000 },
    log,
  );
  t.teardown(() => store.close());
  const a = storedAccount({ label: 'flush' });
  await store.accounts.createAccount(a);
  t.same(await store.counting.consume(consumeSpec(a), DAY), { kind: 'ok', used: 1 });
  await server.cli('SCRIPT', 'FLUSH');
  await server.cli('CONFIG', 'RESETSTAT');
  t.same(await burstOf(store, consumeSpec(a), 3), ['ok', 'ok', 'ok'], 'answered');
  t.same(await store.counting.consume(consumeSpec(a), DAY), { kind: 'ok', used: 5 }, 'counted once each');
  const stats = await server.cli('INFO', 'commandstats');
  const calls = (name: string): number => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  t.same(
    { evalsha: calls('evalsha'), eval: calls('eval') },
    { evalsha: 2, eval: 1 },
    'NOSCRIPT, one EVAL that loads it again, then EVALSHA',
  );
});

t.test('the connection logs in and selects the database the URL names, as the command connection does', async (t) => {
  const server = await startRedis(t);
  // Set once it runs: the helper's start waits for a PING without a password.
  await server.cli('CONFIG', 'SET', 'requirepass', 's3cret');
  const store = new RedisStore(
    {
      url: `redis://:s3cret@127.0.0.1:${server.port}/3`,
      key_prefix: 'auth:',
      command_timeout_ms: scaled(1000),
      connect_timeout_ms: 2000,
    },
    log,
  );
  t.teardown(() => store.close());
  const a = storedAccount({ label: 'auth' });
  await store.accounts.createAccount(a);
  const spec = consumeSpec(a);
  t.same(await store.counting.consume(spec, DAY), { kind: 'ok', used: 1 });
  const counter = `auth:{acct:${a.id}}:used:${spec.periodId}`;
  t.equal((await server.cli('-a', 's3cret', '--no-auth-warning', '-n', '3', 'GET', counter)).trim(), '1', 'in db 3');
  const clients = await server.cli('-a', 's3cret', '--no-auth-warning', 'CLIENT', 'LIST');
  t.match(clients, /name=fuel-gateway-consume .*db=3/, 'named, on db 3');
});

t.test(
  'an event loop blocked past the timeout while the replies wait in the socket: the calls are answered from them, not failed',
  async (t) => {
    // A gateway stalled (CPU throttled, a long GC, SIGSTOP) with calls in flight: Redis counted
    // them in time and their replies wait unread. Failing them at the timeout would answer 503 for
    // requests Redis counted.
    const server = await startRedis(t);
    const store = new RedisStore(
      { url: server.url, key_prefix: 'stall:', command_timeout_ms: COMMAND_TIMEOUT_MS, connect_timeout_ms: 2000 },
      log,
    );
    t.teardown(() => store.close());
    const a = storedAccount({ label: 'stall' });
    await store.accounts.createAccount(a);
    const spec = consumeSpec(a, { limit: 1_000_000 });
    await waitFor("Redis' clock", () => store.clockKnown(), scaled(5000));
    t.same(new Set(await burstOf(store, spec, 5)), new Set(['ok']));
    // More than a batch (16): the first full batch is written at once, before the loop is held
    // past its timeout while Redis answers it; the rest go after.
    const stalled = burstOf(store, spec, 20);
    const until = Date.now() + COMMAND_TIMEOUT_MS * 2;
    while (Date.now() < until);
    const kinds = await stalled;
    const counted = (await store.counting.usage(a.id, spec.periodId)) - 5;
    t.equal(kinds.filter((k) => k === 'ok').length, counted, 'as many answered ok as Redis counted');
    t.same(new Set(kinds), new Set(['ok']), 'every call answered from its reply');
  },
);
