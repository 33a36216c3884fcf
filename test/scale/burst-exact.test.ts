import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pino from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { createAccount } from '../../src/keys/accounts.js';
import { allowanceFor } from '../../src/quota/allowance.js';
import { BURST_FIELD } from '../../src/store/counting/lua.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { type GatewayProcess, gatewayProcess, redisConfig, runCli, storeTimeouts } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const TOO_MANY = '{"success":false,"message":"Too many requests."}';

interface Answer {
  status: number;
  body: string;
  retryAfter: string | null;
  /** Local time before the request was sent and after its answer came: its admission lies between. */
  sent: number;
  answered: number;
}

t.test(
  'three gateways on one Redis, burst 10/1 s, 300 parallel requests: at most 10 admitted in any one second',
  async (t) => {
    const redis = await startRedis(t);
    const file = redisConfig(
      { url: redis.url },
      {
        limits: { invalid_key_throttle: { max_attempts: 100000 } },
        plans: { starter: { burst: { limit: 10, window_s: 1 } } },
      },
    );
    const gateways = await Promise.all([0, 1, 2].map(() => gatewayProcess(t, file)));
    const config = loadConfig({ file, env: {} });
    const store = new RedisStore(config.store.redis, pino({ level: 'silent' }));
    t.teardown(() => store.close());
    const { account, api_key } = await createAccount(
      store.accounts,
      config.plans,
      { plan: 'starter', label: 'burst', status: 'active', limit: null },
      Date.now(),
    );
    // Redis' own record of each admission: the time the script appended to the account's burst
    // log (MONITOR shows the commands a script runs). Client-side times cannot bound a window once
    // a loaded machine stretches the requests past a second.
    const admissions: number[] = [];
    const watcher = new Redis(redis.url);
    const monitor = await watcher.monitor();
    t.teardown(() => {
      monitor.disconnect();
      watcher.disconnect();
    });
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toUpperCase() === 'HSET' && args[1]?.endsWith(`{acct:${account.id}}:account`))
        if (args[2] === BURST_FIELD) admissions.push(Number(args[3]?.slice(-16)));
    });
    // Every gateway knows the account first, so the 300 meet the store together.
    for (const gw of gateways) await (await fetch(`${gw.base}/fuel-api/api/usage.php?api_key=${api_key}`)).text();
    const answers: Answer[] = await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const gw = gateways[i % 3] as GatewayProcess;
        const sent = Date.now();
        const r = await fetch(`${gw.base}${SIMPLE}?api_key=${api_key}`);
        const body = await r.text();
        return { status: r.status, body, retryAfter: r.headers.get('retry-after'), sent, answered: Date.now() };
      }),
    );
    const admitted = answers.filter((a) => a.status === 200).sort((a, b) => a.sent - b.sent);
    const refused = answers.filter((a) => a.status !== 200);
    t.ok(admitted.length >= 10, `${admitted.length} admitted: the first window's 10 at least`);
    t.ok(
      refused.every((a) => a.status === 429 && a.body === TOO_MANY && Number(a.retryAfter) >= 1),
      'every other answer is the burst refusal with Retry-After ≥ 1',
    );
    await waitFor('every admission seen by MONITOR', () => admissions.length >= admitted.length);
    t.equal(admissions.length, admitted.length, 'one admission in the burst log per request admitted');
    admissions.sort((a, b) => a - b);
    let tightest = Infinity;
    for (let i = 0; i + 10 < admissions.length; i++)
      tightest = Math.min(tightest, (admissions[i + 10] as number) - (admissions[i] as number));
    t.ok(
      tightest >= 1_000_000,
      `in Redis time, the 11th admission after any one comes a full second later or more (closest: ${tightest} µs)`,
    );
    // The same from outside, where it can be seen: admissions whose whole request lies within one second.
    let most = 0;
    for (const first of admitted) {
      const inside = admitted.filter((a) => a.sent >= first.sent && a.answered < first.sent + 1000).length;
      most = Math.max(most, inside);
    }
    t.ok(most <= 10, `at most 10 in any one second (found ${most})`);
    const span = Math.max(...answers.map((a) => a.answered)) - Math.min(...answers.map((a) => a.sent));
    t.ok(
      admitted.length <= 10 * (Math.ceil(span / 1000) + 1),
      `${admitted.length} admitted over ${span} ms: no more than the windows it spans allow`,
    );
    const period = allowanceFor(account, config.plans, config.time_zone, Date.now()).period;
    t.equal(await store.counting.usage(account.id, period.id), admitted.length, 'Redis counted the admitted ones only');
    const [record] = (await store.counting.periodRecords([account.id], 0, Date.now() + 86_400_000))[0] ?? [];
    t.equal(record?.used, admitted.length, 'and the ledger too');
    for (const gw of gateways) t.equal(gw.child.exitCode, null, 'no gateway died');
  },
);

t.test('accounts set-burst ID N/S|none sets and clears the burst limit on a running gateway', async (t) => {
  const redis = await startRedis(t);
  const file = join(tempDir('fpg-burst-cli-'), 'gateway.yaml');
  writeFileSync(
    file,
    JSON.stringify({ store: { type: 'redis', redis: { url: redis.url, ...storeTimeouts() } }, log: { access: false } }),
  );
  const cli = async (...args: string[]) => {
    const r = await runCli([...args, '--config', file]);
    return { ...r, json: r.code === 0 ? (JSON.parse(r.stdout) as any) : null };
  };
  const gw = await gatewayProcess(t, file);
  const created = await cli('accounts', 'create', '--plan', 'starter');
  const id = created.json.account.id as string;
  const key = created.json.api_key as string;
  const set = await cli('accounts', 'set-burst', id, '1/60');
  t.equal(set.code, 0, set.stderr);
  t.same(set.json.account.burst, { limit: 1, window_s: 60 });
  const get = () => fetch(`${gw.base}${SIMPLE}?api_key=${key}`).then(async (r) => [r.status, await r.text()]);
  t.same((await get())[0], 200);
  t.same(await get(), [429, TOO_MANY], 'the second within a minute is refused');
  const bad = await cli('accounts', 'set-burst', id, '10/0');
  t.equal(bad.code, 1);
  t.match(bad.stderr, /burst\.window_s: expected at least 1/);
  const odd = await cli('accounts', 'set-burst', id, 'ten');
  t.equal(odd.code, 1);
  t.match(odd.stderr, /burst: expected N\/S .* or none/);
  const none = await cli('accounts', 'set-burst', id, 'none');
  t.equal(none.code, 0, none.stderr);
  t.notOk('burst' in none.json.account);
  t.same((await get())[0], 200, 'no burst limit: admitted');
});
