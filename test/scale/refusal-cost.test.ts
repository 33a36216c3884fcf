/**
 * What a refused key costs the store, counted by Redis itself (INFO commandstats, and MONITOR for
 * the key lookups, told apart from the gateway's background reads by their key) while a gateway
 * on a private redis-server answers real HTTP: a malformed key nothing, a well-formed unknown key
 * its one lookup (none while the negative cache holds it), a blocked address nothing. The
 * invalid-key throttle still counts every attempt across instances: those that arrive together
 * (in one turn of the event loop) in one script call, and attempts at well-formed keys in flight
 * together with a reservation or two (keys/attempts.ts).
 */
import { spawn } from 'node:child_process';
import t from 'tap';
import { generateKey } from '../../src/keys/key-generator.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { type RedisServer, startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php?api_key=';

/** Calls of each command so far, as Redis counts them (INFO itself left out). */
async function commandCalls(redis: RedisServer): Promise<Map<string, number>> {
  const out = await redis.cli('INFO', 'commandstats');
  const calls = new Map<string, number>();
  for (const m of out.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    if (m[1] !== 'info') calls.set(m[1] as string, Number(m[2]));
  return calls;
}

/** The key lookups (GET of a key-hash index entry) Redis ran while `work` ran, seen through MONITOR. */
async function lookupsDuring(redis: RedisServer, work: () => Promise<void>): Promise<number> {
  const monitor = spawn('redis-cli', ['-p', String(redis.port), 'MONITOR'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let seen = '';
  monitor.stdout.setEncoding('utf8');
  monitor.stdout.on('data', (chunk: string) => (seen += chunk));
  const exited = new Promise((resolve) => monitor.once('exit', resolve));
  try {
    await waitFor('MONITOR to start', () => seen.startsWith('OK'));
    await work();
    // Everything Redis ran before the marker is in the stream once the marker is.
    await redis.cli('ECHO', 'end-of-work');
    await waitFor('MONITOR to catch up', () => seen.includes('end-of-work'));
  } finally {
    monitor.kill();
    await exited;
  }
  return seen.split('\n').filter((line) => /"get" "[^"]*keyhash:/i.test(line)).length;
}

/** The commands Redis ran while `work` ran, by name, and `lookups`: the key lookups among them. */
async function commandsDuring(redis: RedisServer, work: () => Promise<void>): Promise<Record<string, number>> {
  const before = await commandCalls(redis);
  const lookups = await lookupsDuring(redis, work);
  const after = await commandCalls(redis);
  const delta: Record<string, number> = {};
  for (const [name, n] of after) if (n - (before.get(name) ?? 0) > 0) delta[name] = n - (before.get(name) ?? 0);
  return { ...delta, lookups };
}

const total = (d: Record<string, number>): number =>
  Object.entries(d).reduce(
    (s, [name, n]) => (name === 'lookups' || name === 'monitor' || name === 'echo' ? s : s + n),
    0,
  );

async function gatewayOn(t: Parameters<typeof startRedis>[0], maxAttempts: number) {
  const redis = await startRedis(t);
  const gw = await startGateway(t, {
    store: redis.store,
    log: { access: false },
    demo_accounts: false,
    limits: {
      invalid_key_throttle: { max_attempts: maxAttempts, window_s: 60, block_s: 60 },
      // Long enough to outlast the counting between two floods on a busy machine.
      account_cache: { negative_ttl_ms: 60_000 },
    },
  });
  return { redis, gw };
}

/** `n` requests, `width` at a time, each with the key `keyOf(i)`; returns the statuses seen. */
async function flood(gw: TestGateway, n: number, keyOf: (i: number) => string, width = 10): Promise<Set<number>> {
  const statuses = new Set<number>();
  for (let i = 0; i < n; i += width)
    await Promise.all(
      Array.from({ length: Math.min(width, n - i) }, async (_, j) => {
        const r = await gw.get(`${SIMPLE}${keyOf(i + j)}`);
        await r.arrayBuffer();
        statuses.add(r.status);
      }),
    );
  return statuses;
}

/**
 * Waits until the address's shared count of attempts reaches `atLeast` (the batches reached Redis);
 * returns the commands the wait itself sent, by name, to take off a count.
 */
async function shared(redis: RedisServer, atLeast: number): Promise<Record<string, number>> {
  const own = { keys: 0, hget: 0 };
  await waitFor('the attempts to be shared', async () => {
    own.keys++;
    const keys = (await redis.cli('KEYS', '*invalid:*')).split('\n').filter((k) => k !== '');
    own.hget += keys.length;
    const counts = await Promise.all(keys.map((k) => redis.cli('HGET', k, 'f')));
    return counts.some((c) => Number(c) >= atLeast);
  });
  return own;
}

/** `during` less the test's own commands. */
function less(during: Record<string, number>, own: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, n] of Object.entries(during)) if (n - (own[name] ?? 0) > 0) out[name] = n - (own[name] ?? 0);
  return out;
}

t.test(
  'a flood of malformed keys: no lookup, and the attempts that arrive together shared in one command',
  async (t) => {
    const { redis, gw } = await gatewayOn(t, 1_000_000);
    const n = 400;
    let statuses = new Set<number>();
    let own = {};
    const all = await commandsDuring(redis, async () => {
      statuses = await flood(gw, n, (i) => `not-a-key-${i}`);
      own = await shared(redis, n);
    });
    const during = less(all, own);
    t.same([...statuses], [401], 'every one refused 401');
    t.equal(during.lookups ?? 0, 0, 'no key was looked up');
    // Each call of the throttle's script reads the address's count with one HMGET.
    t.ok(
      (during.hmget ?? 0) < n / 4,
      `the throttle's count took ${during.hmget ?? 0} batches for ${n} keys (10 at a time)`,
    );
    t.ok(total(during) < n / 2, `${total(during)} commands in all for ${n} refusals: ${JSON.stringify(during)}`);
  },
);

t.test(
  'distinct well-formed unknown keys: one lookup each; the same one again, none while negatively cached',
  async (t) => {
    const { redis, gw } = await gatewayOn(t, 1_000_000);
    const n = 200;
    const keys = Array.from({ length: n }, () => generateKey());
    let statuses = new Set<number>();
    let own = {};
    const all = await commandsDuring(redis, async () => {
      statuses = await flood(gw, n, (i) => keys[i] as string);
      own = await shared(redis, n);
    });
    const scan = less(all, own);
    t.same([...statuses], [401], 'every one refused 401');
    t.equal(scan.lookups, n, 'one lookup (GET of the key index) per key');
    // Attempts in flight together take a reservation, then tell their outcome: a few script calls
    // per batch of 10 (each with an HMGET, a TIME and an HSET inside), never one per key.
    t.ok((scan.hmget ?? 0) < n / 2, `the throttle's count took ${scan.hmget ?? 0} script calls for ${n} keys`);
    t.ok(total(scan) - n < 1.5 * n, `${total(scan)} commands in all for ${n} keys: ${JSON.stringify(scan)}`);

    const again = await commandsDuring(redis, async () => {
      statuses = await flood(gw, 100, () => keys[0] as string);
    });
    t.same([...statuses], [401], 'the same unknown key again: 401');
    t.equal(again.lookups, 0, `not looked up again while the negative cache holds it: ${JSON.stringify(again)}`);
  },
);

t.test('a blocked address: refused 429 without a store command, but for one well-formed key a second', async (t) => {
  const { redis, gw } = await gatewayOn(t, 5);
  const published = (await commandCalls(redis)).get('publish') ?? 0;
  await flood(gw, 5, (i) => `bad-${i}`, 1);
  await waitFor('the address to be blocked', async () => (await flood(gw, 1, () => 'bad')).has(429));
  // The attempts before the block reach Redis in a batch, which announces the block there too.
  await waitFor('the block to be shared', async () => ((await commandCalls(redis)).get('publish') ?? 0) > published);
  const started = Date.now();
  let statuses = new Set<number>();
  const during = await commandsDuring(redis, async () => {
    statuses = await flood(gw, 300, (i) => (i % 2 === 0 ? `bad-${i}` : generateKey()));
  });
  const seconds = (Date.now() - started) / 1000;
  t.ok(statuses.has(429), 'refused as throttled');
  // A well-formed key let through that turns out unknown is an attempt like any other.
  t.ok(
    (during.hmget ?? 0) <= (during.lookups ?? 0),
    `a blocked address adds nothing to the shared count but for keys let through: ${JSON.stringify(during)}`,
  );
  t.ok(
    (during.lookups ?? 0) <= Math.ceil(seconds) + 1,
    `${during.lookups ?? 0} lookups in ${seconds.toFixed(1)} s (one well-formed key a second passes the block)`,
  );
});
