import { Redis } from 'ioredis';
import pino from 'pino';
import t, { type Test } from 'tap';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import type { ConsumeSpec, StoredAccount } from '../../src/store/store.js';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { scaled } from '../helpers/wait.js';
import { account, spec } from './contract/fixtures.js';

/**
 * The Redis ledger's day marks (src/store/counting/ledger-lua.ts) where the store contract cannot
 * reach: periods written by the earlier layout (a count per day), a gateway of the earlier
 * release counting beside this one, two gateways racing over a day's first request, and what a
 * request costs Redis.
 */
const server = await startRedis(t);
const raw = new Redis(server.url);
t.teardown(() => raw.quit());

const START = Date.parse('2026-11-23T10:00:00+02:00');
const END = Date.parse('2026-12-23T10:00:00+02:00');
const WIDE: [number, number] = [0, 8e15];
let seq = 0;

const open = (t: Test, prefix: string): RedisStore => {
  const store = new RedisStore(
    { url: server.url, key_prefix: prefix, command_timeout_ms: scaled(500), connect_timeout_ms: 2000 },
    pino({ level: 'silent' }),
  );
  t.teardown(() => store.close());
  return store;
};

const periodSpec = (a: StoredAccount, over: Partial<ConsumeSpec> = {}): ConsumeSpec =>
  spec(a, {
    periodId: String(START),
    limit: 1000,
    expireAtMs: END + 86_400_000,
    record: { plan: 'starter', kind: 'monthly', startMs: START, endMs: END },
    ...over,
  });

async function setUp(t: Test) {
  const prefix = `ledger${process.pid}_${++seq}:`;
  const store = open(t, prefix);
  const a = account();
  await store.accounts.createAccount(a);
  const tag = `${prefix}{acct:${a.id}}`;
  const keys = { counter: `${tag}:used:${START}`, days: `${tag}:days:${START}`, periods: `${tag}:periods` };
  const ledger = async (s = store) => {
    const [records] = await s.counting.periodRecords([a.id], ...WIDE);
    return { used: records?.[0]?.used, days: records?.[0]?.days };
  };
  return { prefix, store, a, keys, ledger };
}

/** What a gateway of the earlier release does for a counted request, and for a refund (its scripts, less the checks). */
const OLD_CONSUME = `redis.call('HINCRBY', KEYS[2], ARGV[1], 1) return redis.call('INCR', KEYS[1])`;
const OLD_REFUND = `
local used = tonumber(redis.call('GET', KEYS[1]) or 0)
if used <= 0 then return 0 end
if tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or 0) > 0 then redis.call('HINCRBY', KEYS[2], ARGV[1], -1) end
return redis.call('DECR', KEYS[1])`;

t.test('a period written in the old layout reads as it was, and goes on in the new one', async (t) => {
  const { store, a, keys, ledger } = await setUp(t);
  // As the earlier release left it: a count per day, the record, the counter, the index.
  await raw.hset(keys.days, {
    plan: 'starter',
    kind: 'monthly',
    limit: '1000',
    start: String(START),
    end: String(END),
    '2026-11-23': '3',
    '2026-11-24': '2',
  });
  await raw.set(keys.counter, '5');
  await raw.zadd(keys.periods, END + 86_400_000, String(START));
  for (const k of Object.values(keys)) await raw.pexpireat(k, END + 86_400_000);
  const old = [
    ['2026-11-23', 3],
    ['2026-11-24', 2],
  ];
  t.same(await ledger(), { used: 5, days: old }, 'read back as written');
  await store.counting.consume(periodSpec(a), '2026-11-24');
  await store.counting.consume(periodSpec(a), '2026-11-25');
  await store.counting.consume(periodSpec(a), '2026-11-25');
  t.same(await ledger(), {
    used: 8,
    days: [
      ['2026-11-23', 3],
      ['2026-11-24', 3],
      ['2026-11-25', 2],
    ],
  });
  t.same(await raw.hget(keys.days, '2026-11-24'), '2', 'an old field is never rewritten by a count');
  await store.counting.refund(a.id, String(START), '2026-11-23');
  await store.counting.refund(a.id, String(START), '2026-11-25');
  t.same(
    await ledger(),
    {
      used: 6,
      days: [
        ['2026-11-23', 2],
        ['2026-11-24', 3],
        ['2026-11-25', 1],
      ],
    },
    'refunds take from an old day and from a marked one',
  );
  t.equal((await raw.pttl(keys.days)) > 0, true, 'the record kept its expiry');
});

t.test('a gateway of the earlier release counting beside this one: every day exact', async (t) => {
  const { store, a, keys, ledger } = await setUp(t);
  const old = (day: string) => raw.eval(OLD_CONSUME, 2, keys.counter, keys.days, day);
  const oldRefund = (day: string) => raw.eval(OLD_REFUND, 2, keys.counter, keys.days, day);
  await old('2026-11-23');
  await store.counting.consume(periodSpec(a), '2026-11-23');
  await old('2026-11-23');
  await store.counting.consume(periodSpec(a), '2026-11-24');
  await old('2026-11-24');
  await old('2026-11-23'); // its clock behind
  await store.counting.consume(periodSpec(a), '2026-11-24');
  await old('2026-11-25');
  await store.counting.consume(periodSpec(a), '2026-11-25');
  t.same(await ledger(), {
    used: 9,
    days: [
      ['2026-11-23', 4],
      ['2026-11-24', 3],
      ['2026-11-25', 2],
    ],
  });
  // Either release refunds either's request: a day loses one, the others keep theirs.
  await oldRefund('2026-11-24');
  await oldRefund('2026-11-25');
  await store.counting.refund(a.id, String(START), '2026-11-23');
  await old('2026-11-25');
  t.same(await ledger(), {
    used: 7,
    days: [
      ['2026-11-23', 3],
      ['2026-11-24', 2],
      ['2026-11-25', 2],
    ],
  });
});

t.test("two gateways' first requests of a day race, with late ones of the day before: each day exact", async (t) => {
  const { prefix, store, a, keys, ledger } = await setUp(t);
  const other = open(t, prefix);
  const expected = new Map<string, number>();
  const sent: Array<Promise<unknown>> = [];
  // Each gateway's own order: its clock crosses midnight once; the other's is a little behind.
  const days = ['2026-11-23', '2026-11-24', '2026-11-25'];
  for (let d = 0; d < days.length; d++)
    for (let i = 0; i < 40; i++) {
      const day = days[d] as string;
      const late = (i < 10 && days[d - 1]) || day;
      sent.push(store.counting.consume(periodSpec(a), day), other.counting.consume(periodSpec(a), late));
      expected.set(day, (expected.get(day) ?? 0) + 1);
      expected.set(late, (expected.get(late) ?? 0) + 1);
      if (i % 7 === 0) await new Promise((r) => setImmediate(r));
    }
  await Promise.all(sent);
  t.same(await ledger(), { used: 240, days: [...expected].sort() });
  t.same(
    Object.keys(await raw.hgetall(keys.days))
      .filter((f) => f.startsWith('@'))
      .sort(),
    days.map((d) => `@${d}`),
    'one mark per day, whichever gateway set it',
  );
  t.same(
    await raw.hmget(`${prefix}{acct:${a.id}}:account`, 'ledger_day', 'ledger_days'),
    ['2026-11-25', keys.days],
    'the hint names the last day',
  );
});

/** Redis's own count of the commands it ran, by command name. */
async function commandCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const line of String(await raw.info('commandstats')).split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (m && m[1] !== 'info' && m[1] !== 'config|resetstat') counts[m[1] as string] = Number(m[2]);
  }
  return counts;
}

t.test(
  "a request of a marked day costs HMGET and INCR; a day's first adds a read and a write of the days",
  async (t) => {
    const { store, a } = await setUp(t);
    await store.counting.consume(periodSpec(a), '2026-11-23');
    await raw.config('RESETSTAT');
    for (let i = 0; i < 10; i++) await store.counting.consume(periodSpec(a), '2026-11-23');
    const { time: _, ...warm } = await commandCounts();
    t.same(warm, { evalsha: 10, hmget: 10, incr: 10 });
    await raw.config('RESETSTAT');
    await store.counting.consume(periodSpec(a), '2026-11-24');
    const { time: __, ...first } = await commandCounts();
    t.same(first, { evalsha: 1, hmget: 1, incr: 1, hgetall: 1, hset: 2 }, 'the mark, and the hint on the account');
  },
);

t.test(
  'requests of one account in one call share its HMGET; two periods interleaved in it each count exact',
  async (t) => {
    const { store, a, ledger } = await setUp(t);
    await store.counting.consume(periodSpec(a), '2026-11-23');
    await raw.config('RESETSTAT');
    // One turn, one call (MAX_BATCH is 16): the first reads the account, the other nine share it.
    await Promise.all(Array.from({ length: 10 }, () => store.counting.consume(periodSpec(a), '2026-11-23')));
    const { time: _, ...shared } = await commandCounts();
    t.same(shared, { evalsha: 1, hmget: 1, incr: 10 });
    // A second period of the same account, interleaved: each switch of period marks, which drops
    // the shared copy, so each request sees the hint the one before it wrote.
    const next: Partial<ConsumeSpec> = {
      periodId: String(END),
      record: { plan: 'starter', kind: 'monthly', startMs: END, endMs: END + 1 },
    };
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.counting.consume(periodSpec(a, i % 2 === 0 ? {} : next), '2026-11-23')),
    );
    t.same(
      results.map((r) => (r.kind === 'ok' ? r.used : r.kind)),
      [12, 1, 13, 2, 14, 3, 15, 4],
    );
    const [records] = await store.counting.periodRecords([a.id], ...WIDE);
    t.same(
      records?.map((r) => [r.periodId, r.used, r.days]),
      [
        [String(START), 15, [['2026-11-23', 15]]],
        [String(END), 4, [['2026-11-23', 4]]],
      ],
    );
    t.ok(ledger);
  },
);

t.test('a request at 23:59:59.999 on one gateway and at 00:00 on another count on their own days', async (t) => {
  const clocks = [new ManualClock(NOW), new ManualClock(NOW)];
  const gws = [];
  for (const clock of clocks)
    gws.push(
      await startGateway(
        t,
        {
          store: { type: 'redis', redis: { url: server.url, key_prefix: `midnight${process.pid}:` } },
          log: { access: false },
          webhooks: { poll_interval_ms: 3_600_000 },
        },
        { clock },
      ),
    );
  const [g1, g2] = gws as [(typeof gws)[0], (typeof gws)[0]];
  const made = (await adminCall(g1, 'POST', '/admin/accounts', { plan: 'starter' })).body;
  const auth = { headers: { 'X-API-Key': made.api_key as string } };
  const get = async (gw: typeof g1, clock: ManualClock, iso: string) => {
    clock.advanceTo(Date.parse(iso));
    t.equal((await gw.get('/fuel-api/api/simple-current.php', auth)).status, 200, iso);
  };
  await get(g1, clocks[0] as ManualClock, '2026-11-24T12:00:00+02:00');
  await get(g2, clocks[1] as ManualClock, '2026-11-25T00:00:00.000+02:00');
  await get(g1, clocks[0] as ManualClock, '2026-11-24T23:59:59.999+02:00');
  await get(g2, clocks[1] as ManualClock, '2026-11-25T00:00:00.001+02:00');
  const r = await g2.get('/fuel-api/api/usage-history.php?from=2026-11-23&to=2026-11-26', auth);
  const body = (await r.json()) as { days: Array<{ date: string; requests: number }> };
  t.same(
    body.days.filter((d) => d.requests > 0),
    [
      { date: '2026-11-24', requests: 2 },
      { date: '2026-11-25', requests: 2 },
    ],
  );
});

t.test('a period whose keys expired while the hint still named them is marked and recorded again', async (t) => {
  const { store, a, keys, ledger } = await setUp(t);
  await store.counting.consume(periodSpec(a), '2026-11-23');
  await raw.del(keys.counter, keys.days);
  await store.counting.consume(periodSpec(a), '2026-11-23');
  await store.counting.consume(periodSpec(a), '2026-11-23');
  t.same(await ledger(), { used: 2, days: [['2026-11-23', 2]] });
  t.ok((await raw.pttl(keys.days)) > 0, 'the record was written again, with its expiry');
});
