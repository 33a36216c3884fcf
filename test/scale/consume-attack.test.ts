import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { createAccount } from '../../src/keys/accounts.js';
import { allowanceFor } from '../../src/quota/allowance.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { dayOf } from '../../src/time/days.js';
import { type GatewayProcess, gatewayProcess, redisConfig, runCli } from '../helpers/cli.js';
import { type Getter, getter } from '../helpers/get.js';
import { type RedisServer, startRedis, storeTimeouts } from '../helpers/redis.js';
import { answers, scaled, sleep, waitFor } from '../helpers/wait.js';

// Faults from outside under load on two gateway processes sharing one Redis: after each, every
// account's counter equals the 200s it was answered (nothing a 503 was answered counts), the
// limited account is never over its limit, the export's days sum to the counter, and both
// gateways serve again within seconds.
// Two at a time (118 s one at a time), each on a rig (a Redis and two gateways) no other attack
// holds, with accounts of its own. A rig serves attack after attack, its gateways made two again
// when one was killed: a gateway's start costs ~1.7 s of CPU under coverage, and 16 of them, a rig
// per attack, were most of this file's CPU once the load was paced.
t.jobs = 2;

const SIMPLE = '/fuel-api/api/simple-current.php';
const ACCOUNTS = 8;
// The fault comes when the limited account has half of it (attack): it is reached through the
// fault or just after it, so "never over its limit" is put to the test.
const LIMIT = 20;
// Between one worker's requests: six workers send ~150 a second per attack, a request every few
// ms through each fault window (held in flight through the stalls); unpaced, they sent as many
// as the CPU allowed, 4,000 to 10,000 per attack.
const PACE_MS = 30;

interface Rig {
  redis: RedisServer;
  file: string;
  gateways: GatewayProcess[];
  keys: Array<{ id: string; key: string }>;
  store: RedisStore;
}

/** Rigs no attack holds now. Ended with the file (the teardowns are the file's). */
const idle: Rig[] = [];

async function rig(): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'fpg-attack-'));
  // `always`: with the default `everysec`, Redis answers for writes it has not written out while
  // a busy disk holds its fsync, and a kill -9 loses them (5 accounts 1 short beside the bench).
  const redis = await startRedis(t, [
    '--appendonly',
    'yes',
    '--appendfsync',
    'always',
    '--dir',
    dir,
    '--enable-debug-command',
    'local',
  ]);
  const file = redisConfig(
    { url: redis.url, command_timeout_ms: scaled(300) },
    { limits: { invalid_key_throttle: { max_attempts: 1_000_000 } } },
  );
  const config = loadConfig({ file, env: {} });
  // The test's own reads wait longer than the gateways' 300 ms: they judge, they are not judged.
  const store = new RedisStore(
    { ...config.store.redis, ...storeTimeouts(), command_timeout_ms: scaled(5000) },
    pino({ level: 'silent' }),
  );
  t.teardown(() => store.close());
  return { redis, file, gateways: [], keys: [], store };
}

/** A rig of this attack's own: two gateways serving, and the accounts of this attack. */
async function take(): Promise<Rig> {
  const r = idle.pop() ?? (await rig());
  const more = Array.from({ length: 2 - r.gateways.length }, () => gatewayProcess(t, r.file));
  r.gateways.push(...(await Promise.all(more)));
  // After a Redis restarted by the attack before, the test's own connection may still be on its way back.
  await waitFor('the test store to reach Redis', answers(r.store), 5000);
  const config = loadConfig({ file: r.file, env: {} });
  const keys: Rig['keys'] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    // The last account has a limit the load passes: never over it.
    const limit = i === ACCOUNTS - 1 ? LIMIT : 1_000_000;
    const { account, api_key } = await createAccount(
      r.store.accounts,
      config.plans,
      { plan: 'business', label: `attack${i}`, status: 'active', limit },
      Date.now(),
    );
    keys.push({ id: account.id, key: api_key });
  }
  r.keys = keys;
  return r;
}

interface Load {
  http: Getter;
  ok: number[];
  statuses: Record<string, number>;
  sent: () => number;
  stop: () => Promise<void>;
}

/** `workers` loops each sending one request at a time, round the accounts and the gateways. */
function load(r: Rig, workers = 6): Load {
  const http = getter();
  const ok = r.keys.map(() => 0);
  const statuses: Record<string, number> = {};
  let running = true;
  let n = 0;
  const loop = async (): Promise<void> => {
    while (running) {
      const i = n++;
      const k = i % r.keys.length;
      const gw = r.gateways[i % r.gateways.length] as GatewayProcess;
      let status = 'error';
      try {
        const res = await http.get(`${gw.base}${SIMPLE}?api_key=${r.keys[k]?.key}`, {}, scaled(3000));
        status = String(res.status);
        if (res.status === 200) ok[k] = (ok[k] ?? 0) + 1;
      } catch {
        // No answer (a gateway killed, or stopped past the timeout): counted as an error.
      }
      statuses[status] = (statuses[status] ?? 0) + 1;
      await sleep(PACE_MS);
    }
  };
  const loops = Array.from({ length: workers }, loop);
  return {
    http,
    ok,
    statuses,
    sent: () => n,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      http.close();
    },
  };
}

/** Both gateways answer 200 again within a few seconds. */
async function serving(t: Test, r: Rig, l: Load): Promise<void> {
  for (const gw of r.gateways)
    await waitFor(
      'the gateway to serve again',
      async () => {
        const { status } = await l.http.get(`${gw.base}${SIMPLE}?api_key=${r.keys[0]?.key}`);
        if (status === 200) l.ok[0] = (l.ok[0] ?? 0) + 1;
        return status === 200;
      },
      scaled(5000),
    );
  t.pass('both gateways serve again');
}

/** Counters equal the 200s (within `slack` more, for answers lost with a killed gateway or connection). */
async function exact(t: Test, r: Rig, l: Load, slack = 0): Promise<void> {
  const config = loadConfig({ file: r.file, env: {} });
  const today = dayOf(Date.now(), config.time_zone);
  const exported = await runCli(['usage', 'export', '--from', today, '--to', today, '--config', r.file]);
  t.equal(exported.code, 0, exported.stderr);
  const rows = new Map<string, number>();
  for (const line of exported.stdout.trim().split('\r\n').slice(1)) {
    const cells = line.split(',');
    rows.set(cells[0] as string, Number(cells[cells.length - 1]));
  }
  for (const [i, { id }] of r.keys.entries()) {
    const account = await r.store.accounts.getAccount(id);
    if (!account) throw new Error('no account');
    const { period } = allowanceFor(account, config.plans, config.time_zone, Date.now());
    const counter = await r.store.counting.usage(id, period.id);
    const answered = l.ok[i] ?? 0;
    if (slack === 0) t.equal(counter, answered, `account ${i}: counter = its 200s`);
    else
      t.ok(counter >= answered && counter <= answered + slack, `account ${i}: ${counter} within ${answered}+${slack}`);
    if (i === r.keys.length - 1) {
      t.ok(counter <= LIMIT, `the limited account is not over its limit (${counter})`);
      t.ok((l.statuses['429'] ?? 0) > 0, 'the limited account reached its limit: refused past it');
    }
    t.equal(rows.get(id) ?? 0, counter, `account ${i}: export day = counter`);
  }
  t.comment(`${l.sent()} requests: ${JSON.stringify(l.statuses)}`);
}

async function attack(t: Test, fault: (r: Rig) => Promise<void>, slack = 0): Promise<void> {
  const r = await take();
  const l = load(r);
  // The fault comes with the limited account half way to its limit, whatever the load's pace (on
  // a busy machine a whole attack sent 123 requests, 15 an account), and the load goes on until
  // it is refused: its limit is crossed through the fault or after it, never over.
  const limited = r.keys.length - 1;
  await waitFor('the limited account half way', async () => (l.ok[limited] ?? 0) >= LIMIT / 2, scaled(10_000));
  await fault(r);
  await sleep(scaled(800));
  await serving(t, r, l);
  await waitFor('the limited account refused', async () => (l.statuses['429'] ?? 0) > 0, scaled(20_000));
  await l.stop();
  await exact(t, r, l, slack);
  // A rig an attack left failing is not handed to the next.
  if (t.passing()) idle.push(r);
}

const consumeClient = async (r: Rig): Promise<string[]> =>
  (await r.redis.cli('CLIENT', 'LIST'))
    .split('\n')
    .filter((line) => / name=fuel-gateway-consume /.test(line))
    .map((line) => /id=(\d+)/.exec(line)?.[1] as string);

// Never under the 200s (the AOF holds every count answered); over them by at most the requests
// in flight at the kill, whose replies died with Redis after it ran them (one per load worker).
t.test('kill -9 of Redis and a restart from its AOF under load', (t) =>
  attack(
    t,
    async (r) => {
      await r.redis.stop();
      await sleep(scaled(500));
      await r.redis.start();
    },
    6,
  ),
);

t.test('SIGSTOP / SIGCONT of Redis under load', (t) =>
  attack(t, async (r) => {
    r.redis.pause();
    await sleep(scaled(1500));
    r.redis.resume();
  }),
);

// A call Redis ran whose reply the kill dropped is counted and answered 503: the one loss
// inherent to a networked counter (docs/stores.md). So counters may pass the 200s by the requests
// in flight at a kill, at most one per load worker at each of the two; seen beside the bench at
// load 11 (95 against 94).
t.test('CLIENT KILL of both consume connections under load', (t) =>
  attack(
    t,
    async (r) => {
      const ids = await consumeClient(r);
      t.ok(ids.length >= 2, 'each gateway has its consume connection, named (and the test store its own)');
      for (const id of ids) await r.redis.cli('CLIENT', 'KILL', 'ID', id);
      await sleep(scaled(200));
      for (const id of await consumeClient(r)) await r.redis.cli('CLIENT', 'KILL', 'ID', id);
    },
    12,
  ),
);

t.test('SCRIPT FLUSH under load, three times', (t) =>
  attack(t, async (r) => {
    for (let i = 0; i < 3; i++) {
      await r.redis.cli('SCRIPT', 'FLUSH');
      await sleep(scaled(150));
    }
  }),
);

t.test('maxmemory tiny under load: OOM errors from the script', (t) =>
  attack(t, async (r) => {
    await r.redis.cli('CONFIG', 'SET', 'maxmemory', '1');
    await sleep(scaled(800));
    await r.redis.cli('CONFIG', 'SET', 'maxmemory', '0');
  }),
);

t.test('DEBUG SLEEP past the command timeout under load', (t) =>
  attack(t, async (r) => {
    await r.redis.cli('DEBUG', 'SLEEP', String(scaled(600) / 1000));
  }),
);

t.test('kill -9 of one gateway under load', (t) =>
  attack(
    t,
    async (r) => {
      const [a, b] = r.gateways as [GatewayProcess, GatewayProcess];
      await a.stop('SIGKILL');
      r.gateways = [b];
    },
    6,
  ),
);

t.test('SIGSTOP / SIGCONT of one gateway, past the command timeout, under load', (t) =>
  attack(t, async (r) => {
    const a = r.gateways[0] as GatewayProcess;
    a.child.kill('SIGSTOP');
    await sleep(scaled(1000));
    a.child.kill('SIGCONT');
  }),
);
