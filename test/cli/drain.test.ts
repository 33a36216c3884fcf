import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { allowanceFor } from '../../src/quota/allowance.js';
import { RedisStore } from '../../src/store/redis.js';
import { gatewayProcess } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const REQUEST_TIMEOUT_MS = 4000;

interface Tally {
  ok: number;
  cut: number;
}

/** 64 keep-alive connections sending back to back until `stop`, counting complete 200s and answers cut off. */
function load(port: number, key: string, stop: { now: boolean }): Promise<Tally> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const tally: Tally = { ok: 0, cut: 0 };
  const one = (): Promise<boolean> =>
    new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: `${SIMPLE}?api_key=${key}`, agent }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => {
          if (res.statusCode === 200 && JSON.parse(body).success === true) tally.ok++;
          resolve(true);
        });
        res.on('aborted', () => {
          tally.cut++;
          resolve(false);
        });
      });
      // A connection refused or closed before the request was sent: the gateway never had it.
      req.on('error', () => resolve(false));
      req.end();
    });
  const client = async (): Promise<void> => {
    while (!stop.now) if (!(await one())) return;
  };
  return Promise.all(Array.from({ length: 64 }, client)).then(() => {
    agent.destroy();
    return tally;
  });
}

async function drain(t: Test, config: string, counted: (accountId: string) => Promise<number>): Promise<void> {
  const gw = await gatewayProcess(t, config);
  const created = await fetch(`${gw.admin}/admin/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'enterprise', limit: 10_000_000 }),
  });
  const { account, api_key } = (await created.json()) as { account: { id: string }; api_key: string };
  const stop = { now: false };
  const running = load(Number(new URL(gw.base).port), api_key, stop);
  await new Promise((r) => setTimeout(r, 700));
  const signalled = Date.now();
  const exit = gw.stop('SIGTERM');
  const code = await exit;
  const took = Date.now() - signalled;
  stop.now = true;
  const tally = await running;
  t.equal(code, 0, 'exits 0');
  t.ok(took < REQUEST_TIMEOUT_MS, `exited ${took} ms after SIGTERM (request_timeout_ms ${REQUEST_TIMEOUT_MS})`);
  t.equal(tally.cut, 0, 'no answer was cut off');
  t.ok(tally.ok > 200, `${tally.ok} complete 200 answers under load`);
  t.equal(await counted(account.id), tally.ok, 'the store counted exactly the 200s the clients got');
}

function configFile(settings: Record<string, unknown>): { file: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fpg-drain-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(
    file,
    JSON.stringify({
      server: { request_timeout_ms: REQUEST_TIMEOUT_MS, headers_timeout_ms: 2000 },
      log: { access: false },
      ...settings,
    }),
  );
  return { file, dir };
}

t.test(
  'SIGTERM under load on the memory store: every received request answered, 200s equal the count, exit 0 in time',
  async (t) => {
    const { file, dir } = configFile({ store: { memory: { file: 'store.json' } } });
    await drain(t, file, async (id) => {
      const state = JSON.parse(readFileSync(join(dir, 'store.json'), 'utf8')) as {
        counters: Array<{ account: string; used: number }>;
      };
      return state.counters.filter((c) => c.account === id).reduce((n, c) => n + c.used, 0);
    });
  },
);

t.test('SIGTERM under load on Redis: the same', async (t) => {
  const redis = await startRedis(t);
  const { file } = configFile({ store: { type: 'redis', redis: { url: redis.url } } });
  const config = loadConfig({ file, env: {} });
  const store = new RedisStore(config.store.redis, pino({ level: 'silent' }));
  t.teardown(() => store.close());
  await drain(t, file, async (id) => {
    const account = await store.getAccount(id);
    if (!account) throw new Error('no account');
    return store.usage(id, allowanceFor(account, config.plans, config.time_zone, Date.now()).period.id);
  });
});
