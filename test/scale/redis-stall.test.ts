import { Agent, request } from 'node:http';
import t, { type Test } from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { type RedisServer, startRedis } from '../helpers/redis.js';
import { sleep, waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const LIMIT = 200;

interface Answer {
  status: number;
  used: number | null;
}

/** Two gateways on one Redis, and an enterprise account of LIMIT requests known to both. */
async function twoGateways(t: Test, redis: RedisServer): Promise<{ gateways: TestGateway[]; key: string }> {
  const settings = {
    store: { type: 'redis', redis: { url: redis.url, command_timeout_ms: 300 } },
    log: { access: false },
  };
  const gateways = [await startGateway(t, settings), await startGateway(t, settings)];
  const created = await adminCall(gateways[0] as TestGateway, 'POST', '/admin/accounts', {
    plan: 'enterprise',
    limit: LIMIT,
  });
  return { gateways, key: created.body.api_key as string };
}

/** `n` metered GETs spread over the gateways, 100 at a time per gateway. */
function burst(gateways: TestGateway[], key: string, n: number): Promise<Answer[]> {
  const agents = gateways.map(() => new Agent({ keepAlive: true, maxSockets: 100 }));
  const one = (i: number): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const gw = gateways[i % gateways.length] as TestGateway;
      const req = request(
        `${gw.base}${SIMPLE}?api_key=${key}`,
        { agent: agents[i % gateways.length] as Agent },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => {
            const used = res.statusCode === 200 ? (JSON.parse(body).usage.requests_used as number) : null;
            resolve({ status: res.statusCode ?? 0, used });
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  return Promise.all(Array.from({ length: n }, (_, i) => one(i))).finally(() => {
    for (const a of agents) a.destroy();
  });
}

/** Requests counted so far, read without counting. */
async function counted(gw: TestGateway, key: string): Promise<number> {
  const r = await gw.get(`${SIMPLE}?api_key=${key}`, { method: 'HEAD' });
  return LIMIT - Number(r.headers.get('x-ratelimit-remaining'));
}

t.test(
  'Redis frozen for 2 s under 600 requests on two gateways: the 503s are not counted when Redis runs again',
  async (t) => {
    const redis = await startRedis(t);
    const { gateways, key } = await twoGateways(t, redis);
    // Both gateways know the account, so each request goes straight to the consume script.
    for (const gw of gateways) t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 200);
    redis.pause();
    t.teardown(() => redis.resume());
    const paused = Date.now();
    const answers = await burst(gateways, key, 600);
    const unavailable = answers.filter((a) => a.status === 503).length;
    t.equal(unavailable, 600, 'every request got 503 while Redis was frozen');
    await sleep(Math.max(0, 2000 - (Date.now() - paused))); // the freeze lasts 2 s: that is the setup
    redis.resume();
    // Redis now runs the scripts queued on its sockets. A marker on each gateway's own connection:
    // Redis runs a connection's commands in order, so once both are answered, those have run.
    await waitFor('a marker answered from Redis by each gateway', async () => {
      const heads = await Promise.all(gateways.map((gw) => gw.get(`${SIMPLE}?api_key=${key}`, { method: 'HEAD' })));
      return heads.every((r) => r.status === 200);
    });
    const after = await counted(gateways[0] as TestGateway, key);
    const burned = after - 2;
    t.ok(burned <= unavailable / 100, `${burned} of ${unavailable} answers of 503 were counted (at most 1%)`);
    t.ok(after <= LIMIT, 'never over the limit');
  },
);

t.test(
  'connections killed (CLIENT KILL) under 600 requests on two gateways: never over the limit, distinct counts',
  async (t) => {
    const redis = await startRedis(t);
    const { gateways, key } = await twoGateways(t, redis);
    let kills = 0;
    const killer = setInterval(() => {
      kills++;
      redis.cli('CLIENT', 'KILL', 'TYPE', 'normal').catch(() => undefined);
    }, 150);
    const answers = await burst(gateways, key, 600).finally(() => clearInterval(killer));
    const used = answers.filter((a) => a.status === 200).map((a) => a.used as number);
    const statuses = new Set(answers.map((a) => a.status));
    t.ok(kills > 0, `${kills} kills during the burst; statuses ${[...statuses].join(', ')}`);
    t.ok(
      [...statuses].every((s) => s === 200 || s === 429 || s === 503),
      'only 200, 429 (limit) or 503 (store unavailable)',
    );
    t.equal(new Set(used).size, used.length, `the ${used.length} successes each have a distinct requests_used`);
    t.ok(
      used.every((u) => u >= 1 && u <= LIMIT),
      'every requests_used within the limit',
    );
    let after = 0;
    await waitFor('the count readable', async () => {
      after = await counted(gateways[0] as TestGateway, key);
      return after > 0;
    });
    t.ok(after <= LIMIT, `Redis holds ${after}: never over the limit`);
    t.ok(after >= used.length, 'at least every success is counted');
  },
);
