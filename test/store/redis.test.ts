import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { outboxEvent } from '../../src/events/event.js';
import { isGatewayError } from '../../src/failures.js';
import { generateKey, hashKey } from '../../src/keys/key-generator.js';
import { createStore } from '../../src/store/create.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import type { StoredAccount, StoredKey, StoreEvent } from '../../src/store/store.js';
import { startRedis, startSentinel } from '../helpers/redis.js';
import { scaled, waitFor as waitUntil } from '../helpers/wait.js';
import { DAY, hashOf, storedKey } from './contract/fixtures.js';
import { storeContract } from './contract/index.js';

const waitFor = (cond: () => boolean, ms = 2000) => waitUntil('the store events', cond, ms);

const server = await startRedis(t);
const log = pino({ level: 'silent' });
const raw = new Redis(server.url);
t.teardown(() => raw.quit());

let seq = 0;
const nextPrefix = (): string => `t${process.pid}_${++seq}:`;
const options = (prefix = nextPrefix()) => ({
  url: server.url,
  key_prefix: prefix,
  // Generous on a busy machine (a listing of 5000 entries timed out at 500 ms); no test here stalls Redis.
  command_timeout_ms: scaled(500),
  connect_timeout_ms: scaled(2000),
});
const open = (t: Test, prefix?: string): RedisStore => {
  const store = new RedisStore(options(prefix), log);
  t.teardown(() => store.close());
  return store;
};
const account = (over: Partial<StoredAccount> = {}): StoredAccount => ({
  id: `acct_${randomBytes(6).toString('hex')}`,
  status: 'active',
  plan: 'developer',
  limit: null,
  anchor: '2026-11-01T00:00:00+02:00',
  label: 'redis test',
  created_at: '2026-11-01T00:00:00.000Z',
  revision: 1,
  keys: [storedKey({ key_hash: hashKey(generateKey()) })],
  ...over,
});

storeContract(t, async () => new RedisStore(options(), log));

t.test("an endpoint stored before who made it was kept reads as the operator's", async (t) => {
  const prefix = nextPrefix();
  const store = open(t, prefix);
  const old = {
    id: 'wh_old',
    url: 'https://receiver.example/hook',
    events: ['usage.threshold'],
    account_id: null,
    description: null,
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    previous_secret: null,
    previous_until_ms: null,
    created_at: '2026-11-01T00:00:00.000Z',
  };
  await raw.hset(`${prefix}{wh}:endpoints`, old.id, JSON.stringify(old));
  t.same(await store.events.getEndpoint(old.id), { ...old, created_via: 'operator' });
  t.same(
    (await store.events.listEndpoints()).map((e) => e.created_via),
    ['operator'],
  );
  await store.events.enqueueEvent(outboxEvent(`msg_old_${process.pid}`, 'usage.threshold', {}, Date.now(), null));
  const [claimed] = await store.events.claimDeliveries('h_old', Date.now(), 60_000, 10);
  t.equal(claimed?.endpoint.created_via, 'operator', 'as the worker is handed it');
});

t.test('a dump of the store holds key hashes, never the keys', async (t) => {
  const prefix = nextPrefix();
  const store = open(t, prefix);
  const key = generateKey();
  const a = account({ keys: [storedKey({ key_hash: hashKey(key) })] });
  await store.accounts.createAccount(a);
  await store.counting.consume(
    { accountId: a.id, revision: 1, periodId: 'p', limit: 5, expireAtMs: Date.now() + 60_000 },
    DAY,
  );
  await store.accounts.updateAccount(a.id, { label: 'renamed' });
  let dump = '';
  for (const k of await raw.keys('*')) {
    const type = await raw.type(k);
    const value =
      type === 'hash'
        ? JSON.stringify(await raw.hgetall(k))
        : type === 'zset'
          ? (await raw.zrange(k, '0', '-1')).join(',')
          : type === 'set'
            ? (await raw.smembers(k)).join(',')
            : type === 'list'
              ? (await raw.lrange(k, 0, -1)).join(',')
              : await raw.get(k);
    dump += `${k}\n${value}\n`;
  }
  t.match(dump, hashOf(a));
  t.notMatch(dump, key.slice(4, 36), 'not even the random part of the key');
});

t.test('key layout: one hash tag per account, counters expire at expireAtMs, set once', async (t) => {
  const prefix = nextPrefix();
  const store = open(t, prefix);
  const a = account({ limit: 250 });
  await store.accounts.createAccount(a);
  const expireAtMs = Date.now() + 3_600_000;
  await store.counting.consume({ accountId: a.id, revision: 1, periodId: '2026-11', limit: 5, expireAtMs }, DAY);
  await store.counting.consume(
    { accountId: a.id, revision: 1, periodId: '2026-11', limit: 5, expireAtMs: expireAtMs + 5000 },
    DAY,
  );
  const accountKey = `${prefix}{acct:${a.id}}:account`;
  const counterKey = `${prefix}{acct:${a.id}}:used:2026-11`;
  const daysKey = `${prefix}{acct:${a.id}}:days:2026-11`;
  const periodsKey = `${prefix}{acct:${a.id}}:periods`;
  t.same(
    (await raw.keys(`${prefix}*`)).sort(),
    [
      `${prefix}keyhash:${hashOf(a)}`,
      `${prefix}accounts`,
      accountKey,
      counterKey,
      daysKey,
      periodsKey,
      `${prefix}marker`,
    ].sort(),
  );
  t.equal(await raw.call('PEXPIRETIME', daysKey), expireAtMs, 'the days and record expire with the counter');
  t.equal(await raw.call('PEXPIRETIME', periodsKey), expireAtMs, 'and so does the index of periods');
  t.same(await raw.hget(daysKey, `@${DAY}`), '0 0', 'their day is marked at the count before its first request');
  t.equal(await raw.hget(daysKey, DAY), null, 'and has no count of its own: the second request wrote no day');
  t.same(
    await raw.zrange(`${prefix}accounts`, '0', '-1', 'WITHSCORES'),
    [a.id, '0'],
    'the listing index: ids, all of score 0',
  );
  t.equal(await raw.get(`${prefix}keyhash:${hashOf(a)}`), a.id);
  t.equal(await raw.call('PEXPIRETIME', counterKey), expireAtMs);
  t.equal(await raw.pttl(accountKey), -1, 'accounts do not expire');
  t.same(await raw.hgetall(accountKey), {
    ...a,
    limit: '250',
    revision: '1',
    keys: JSON.stringify(a.keys),
    key_hash: hashOf(a),
    // The ledger's hint: the day last marked, and in which period's days (ledger-lua.ts).
    ledger_day: DAY,
    ledger_days: daysKey,
  });
});

t.test(
  'a rotation notes the successor in its own field, not in the keys JSON the previous release reads',
  async (t) => {
    const prefix = nextPrefix();
    const store = open(t, prefix);
    const a = account();
    await store.accounts.createAccount(a);
    const old = a.keys[0] as StoredKey;
    const next = storedKey();
    await store.keys.rotateKey(a.id, old.id, next, new Date(Date.now() + 60_000).toISOString());
    const accountKey = `${prefix}{acct:${a.id}}:account`;
    t.equal(await raw.hget(accountKey, `rt:${old.id}`), next.id);
    const json = JSON.parse((await raw.hget(accountKey, 'keys')) as string) as Array<Record<string, unknown>>;
    t.same(
      json.map((k) => Object.keys(k).sort()),
      [Object.keys(old).sort(), Object.keys(old).sort()],
      'each stored key has the fields it had before rotations were noted',
    );
    await store.keys.revoke(a.id, old.id);
    t.equal(await raw.hexists(accountKey, `rt:${old.id}`), 0, 'a removed key takes its field along');
  },
);

t.test('a null limit is an absent field, and a patch can set and clear it', async (t) => {
  const prefix = nextPrefix();
  const store = open(t, prefix);
  const a = account();
  await store.accounts.createAccount(a);
  t.notOk(await raw.hexists(`${prefix}{acct:${a.id}}:account`, 'limit'));
  t.equal((await store.accounts.updateAccount(a.id, { limit: 7 }))?.limit, 7);
  const cleared = await store.accounts.updateAccount(a.id, { limit: null, label: '' });
  t.same(cleared, { ...a, limit: null, label: '', revision: 3 });
  t.same(await store.accounts.getAccount(a.id), cleared);
});

t.test('a refused create leaves nothing behind, and a stray index entry finds nothing', async (t) => {
  const prefix = nextPrefix();
  const store = open(t, prefix);
  const a = account();
  await store.accounts.createAccount(a);
  const clash = account({ id: a.id });
  const err: unknown = await store.accounts.createAccount(clash).catch((e: unknown) => e);
  t.ok(isGatewayError(err, 'CONFLICT'), 'same id');
  t.equal(await raw.exists(`${prefix}keyhash:${hashOf(clash)}`), 0, 'its key hash was released');
  t.ok(
    isGatewayError(
      await store.accounts
        .createAccount(account({ keys: [storedKey({ key_hash: hashOf(a) })] }))
        .catch((e: unknown) => e),
      'CONFLICT',
    ),
    'same key hash',
  );
  // What a revoke looks like between its two writes: the index names an account that does not (yet or any more) carry the hash.
  await raw.set(`${prefix}keyhash:stray`, a.id);
  t.equal(await store.accounts.findByKeyHash('stray'), null);
  const other = account();
  await store.accounts.createAccount(other);
  t.ok(
    isGatewayError(
      await store.keys.addKey(a.id, storedKey({ key_hash: hashOf(other) })).catch((e: unknown) => e),
      'CONFLICT',
    ),
    'a key hash in use elsewhere',
  );
});

t.test('listing reads the index in chunks: a sparse filter across chunks, a stray index entry skipped', async (t) => {
  const prefix = nextPrefix();
  const store = open(t, prefix);
  const ids = Array.from({ length: 450 }, (_, i) => `acct_${String(i).padStart(4, '0')}`);
  await Promise.all(
    ids.map((id, i) => store.accounts.createAccount(account({ id, label: i % 150 === 7 ? 'needle' : 'hay' }))),
  );
  // What a create looks like between its index entry and its account, or a delete after its script.
  await raw.zadd(`${prefix}accounts`, 0, 'acct_0008');
  const all = await store.accounts.listAccounts({}, null, 1000);
  t.equal(all.accounts.length, 450);
  t.equal(all.next, null);
  const first = await store.accounts.listAccounts({ label: 'needle' }, null, 2);
  t.same(
    first.accounts.map((a) => a.id),
    ['acct_0007', 'acct_0157'],
  );
  t.equal(first.next, 'acct_0157', 'a third match exists, so a cursor');
  const second = await store.accounts.listAccounts({ label: 'needle' }, first.next, 2);
  t.same(second, { accounts: [second.accounts[0]], next: null });
  t.equal(second.accounts[0]?.id, 'acct_0307');
});

t.test('a listing stops after 5000 index entries and its cursor continues from there', async (t) => {
  const prefix = nextPrefix();
  const store = open(t, prefix);
  // Connected before the 5200-command pipeline: on a busy machine the pipeline can outlast the
  // store's first-connect window, which is not what this test is about.
  await store.ping();
  const batch = raw.pipeline();
  for (let i = 0; i < 5200; i++) {
    const { limit: _null, ...a } = account({
      id: `acct_${String(i).padStart(5, '0')}`,
      label: i === 5100 ? 'needle' : 'hay',
    });
    batch.zadd(`${prefix}accounts`, 0, a.id);
    batch.hset(`${prefix}{acct:${a.id}}:account`, { ...a, keys: JSON.stringify(a.keys) });
  }
  await batch.exec();
  const first = await store.accounts.listAccounts({ label: 'needle' }, null, 10);
  t.same(first, { accounts: [], next: 'acct_04999' }, 'an empty page with a cursor: the work of one call is bounded');
  const second = await store.accounts.listAccounts({ label: 'needle' }, first.next, 10);
  t.same(
    second.accounts.map((a) => a.id),
    ['acct_05100'],
  );
  t.equal(second.next, null);
});

t.test(
  'deleting an account removes its key-hash entry and its index entry; its counters, ledger and fields kept for the exports expire on their own',
  async (t) => {
    const prefix = nextPrefix();
    const store = open(t, prefix);
    const a = account();
    await store.accounts.createAccount(a);
    await store.counting.consume(
      { accountId: a.id, revision: 1, periodId: 'p', limit: 5, expireAtMs: Date.now() + 60_000 },
      DAY,
    );
    await store.accounts.deleteAccount(a.id);
    t.same(
      (await raw.keys(`${prefix}*`)).sort(),
      [
        `${prefix}{acct:${a.id}}:used:p`,
        `${prefix}{acct:${a.id}}:days:p`,
        `${prefix}{acct:${a.id}}:periods`,
        `${prefix}{acct:${a.id}}:deleted`,
        `${prefix}deleted-accounts`,
        `${prefix}marker`,
      ].sort(),
      'the counter, its ledger and the account as it was, which expire, the index of deleted accounts (and the data-loss marker)',
    );
    for (const k of ['used:p', 'days:p', 'periods', 'deleted'])
      t.ok((await raw.pttl(`${prefix}{acct:${a.id}}:${k}`)) > 0, `${k} expires`);
    const expiry = (k: string) => raw.call('PEXPIRETIME', `${prefix}{acct:${a.id}}:${k}`) as Promise<number>;
    t.ok((await expiry('deleted')) <= (await expiry('periods')), 'no later than its records');
  },
);

t.test('malformed announcements and failing listeners are ignored', async (t) => {
  const prefix = nextPrefix();
  const store = open(t, prefix);
  const events: StoreEvent[] = [];
  store.coordination.subscribe(() => {
    throw new Error('a broken listener');
  });
  store.coordination.subscribe((e) => events.push(e));
  await store.ping();
  const channel = `${prefix}events`;
  for (const bad of [
    'not json',
    'null',
    '[]',
    '{}',
    '{"type":"other"}',
    '{"type":"account","id":"a"}',
    '{"type":"account","id":"a","keyHashes":[1]}',
  ]) {
    await raw.publish(channel, bad);
  }
  const good: StoreEvent = { type: 'account', id: 'a', keyHashes: ['h'] };
  await raw.publish(channel, JSON.stringify(good));
  await waitFor(() => events.length > 0);
  t.same(events, [good], 'only the well-formed one, which came last');
});

t.test('a change on one instance reaches the subscriber of another within a second', async (t) => {
  const prefix = nextPrefix();
  const [a, b] = [open(t, prefix), open(t, prefix)];
  const events: StoreEvent[] = [];
  b.coordination.subscribe((e) => events.push(e));
  await b.ping();
  const acct = account();
  await a.accounts.createAccount(acct);
  const start = Date.now();
  await a.accounts.updateAccount(acct.id, { status: 'inactive' });
  await waitFor(() => events.length === 2, 1000);
  t.ok(Date.now() - start < 1000);
  t.same(events, [
    { type: 'account', id: acct.id, keyHashes: [hashOf(acct)] },
    { type: 'account', id: acct.id, keyHashes: [hashOf(acct)] },
  ]);
});

t.test('after the subscriber reconnects, listeners are told that anything may have changed', async (t) => {
  const store = open(t);
  const events: StoreEvent[] = [];
  store.coordination.subscribe((e) => events.push(e));
  await store.ping();
  await raw.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
  await waitFor(() => events.length >= 3);
  t.same(events, [
    { type: 'prices' },
    { type: 'account', id: '*', keyHashes: [] },
    { type: 'cache_purge', path: null },
  ]);
});

t.test('through Sentinel, the store finds the master by name', async (t) => {
  const sentinel = await startSentinel(t, server, 'main');
  const prefix = nextPrefix();
  const store = new RedisStore(
    {
      ...options(prefix),
      url: 'redis://127.0.0.1:1',
      sentinel: { name: 'main', nodes: [{ host: '127.0.0.1', port: sentinel.port }] },
    },
    log,
  );
  t.teardown(() => store.close());
  const a = account();
  await store.accounts.createAccount(a);
  t.same(
    await store.counting.consume(
      { accountId: a.id, revision: 1, periodId: 'p', limit: 1, expireAtMs: Date.now() + 60_000 },
      DAY,
    ),
    { kind: 'ok', used: 1 },
  );
  t.equal(await raw.exists(`${prefix}{acct:${a.id}}:account`), 1, 'written to the master');
});

t.test('createStore picks the store the config names', async (t) => {
  const memory = createStore(loadConfig({ env: {} }), log);
  t.equal(memory.kind, 'memory');
  const redis = createStore(loadConfig({ env: { REDIS_URL: server.url } }), log);
  t.teardown(() => redis.close());
  t.equal(redis.kind, 'redis');
  await t.resolves(redis.ping());
});

t.test('config: sentinel and cluster exclude each other', async (t) => {
  const node = [{ host: '127.0.0.1', port: 7000 }];
  const overrides = { store: { redis: { sentinel: { name: 'main', nodes: node }, cluster: { nodes: node } } } };
  t.throws(() => loadConfig({ env: {}, overrides }), /store\.redis\.cluster: sentinel and cluster exclude each other/);
  t.ok(loadConfig({ env: {}, overrides: { store: { redis: { cluster: { nodes: node } } } } }).store.redis.cluster);
});

t.test('a consume receiver that throws does not keep the rest of its batch from their answers', async (t) => {
  const lines: string[] = [];
  const store = new RedisStore(options(), pino({ level: 'error' }, { write: (l: string) => void lines.push(l) }));
  t.teardown(() => store.close());
  const a = account();
  await store.accounts.createAccount(a);
  const spec = { accountId: a.id, revision: 1, periodId: 'p', limit: 5, expireAtMs: Date.now() + 60_000 };
  store.counting.consumeInto(spec, DAY, {
    consumed: () => {
      throw new Error('a broken receiver');
    },
    failed: () => undefined,
  });
  t.same(await store.counting.consume(spec, DAY), { kind: 'ok', used: 2 }, 'the next request in the batch is answered');
  t.match(lines.join(''), /a broken receiver/, 'the failure is logged');
});

t.test(
  'invalid keys reported from one address across two instances: blocked is announced to both at the limit, not before',
  async (t) => {
    const prefix = nextPrefix();
    const a = open(t, prefix);
    const b = open(t, prefix);
    const heard: StoreEvent[] = [];
    b.coordination.subscribe((e) => heard.push(e));
    const rule = { maxAttempts: 3, windowMs: 60_000, blockMs: 1234 };
    const address = `192.0.2.${process.pid % 250}`;
    const invalid = { want: 0, released: 0, failed: 0, unreserved: 1 };
    await a.coordination.invalidKeyAttempts(address, rule, invalid);
    await b.coordination.invalidKeyAttempts(address, rule, invalid);
    // A marker announced after both reports: once it is heard, a blocked they raised would be too.
    await a.coordination.purgeCache('/marker-1');
    await waitFor(() => heard.some((e) => e.type === 'cache_purge' && e.path === '/marker-1'));
    t.same(
      heard.filter((e) => e.type === 'blocked'),
      [],
      'two of three: nothing announced',
    );
    await a.coordination.invalidKeyAttempts(address, rule, invalid);
    await waitFor(() => heard.some((e) => e.type === 'blocked'));
    t.same(
      heard.filter((e) => e.type === 'blocked'),
      [{ type: 'blocked', address, ms: 1234 }],
      'the third, from either instance, blocks the address everywhere',
    );
  },
);

t.test(
  'billing: two gateways racing one account hand out only events already outstanding in the store, the same one',
  async (t) => {
    const prefix = nextPrefix();
    const stores = [open(t, prefix), open(t, prefix)] as const;
    const TS = Date.parse('2026-11-26T10:00:00Z');
    for (let round = 0; round < 20; round++) {
      const a = account();
      await stores[0].accounts.createAccount(a);
      const s = {
        accountId: a.id,
        revision: 1,
        periodId: '1000',
        limit: 1000,
        expireAtMs: Date.now() + 3_600_000,
        record: { plan: 'developer', kind: 'monthly' as const, startMs: 1000, endMs: 1000 + 30 * 86_400_000 },
      };
      for (let i = 0; i < 3; i++) await stores[0].counting.consume(s, DAY);
      // Each gateway stamps its own time, so an event that only one of them wrote is told apart.
      const handed = await Promise.all(
        stores.map(async (store, i) => {
          const events = await store.billing.billingPrepare('stripe', a.id, 'cus_A', TS + i);
          // Read through the other gateway's connection the moment the events are handed out:
          // a write still on its way would not be there yet.
          const other = stores[1 - i] as RedisStore;
          const outstanding = (await other.billing.billingOutstanding('stripe')).filter((e) => e.account_id === a.id);
          return { events, outstanding };
        }),
      );
      for (const [i, { events, outstanding }] of handed.entries())
        for (const e of events)
          t.same(outstanding, [e], `round ${round}: gateway ${i + 1}'s event is outstanding when it is handed out`);
      t.same(handed[0]?.events, handed[1]?.events, `round ${round}: both gateways hand out one and the same event`);
    }
  },
);
