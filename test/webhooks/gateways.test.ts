import t, { type Test } from 'tap';
import { type GatewayProcess, gatewayProcess, redisConfig } from '../helpers/cli.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { scaled, waitFor } from '../helpers/wait.js';

// Its tests share nothing and spend most of their time waiting: they run 2 at a time.
t.jobs = 2;

/**
 * Webhooks across real processes: gateways (dist/, `fuel-gateway serve`) sharing one Redis,
 * and a real receiver on loopback.
 */

function configFile(redisUrl: string, webhooks: Record<string, unknown> = {}): string {
  return redisConfig(
    { url: redisUrl },
    {
      limits: { invalid_key_throttle: { max_attempts: 100000 } },
      webhooks: {
        allow_private_addresses: true,
        allow_http: true,
        // A delivery answered late on a busy machine is not a timeout (and a retry): scaled.
        timeout_ms: scaled(1000),
        poll_interval_ms: 100,
        retry_delays_ms: [300, 300, 300, 300, 300, 300, 300, 300, 300, 300],
        ...webhooks,
      },
    },
  );
}

async function admin(gw: GatewayProcess, method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(`${gw.admin}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return r.json();
}

/** Sends `n` requests for `key`, alternating gateways, `parallel` at a time. */
async function drive(gateways: GatewayProcess[], key: string, n: number, parallel = 24): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) {
        const i = next++;
        const gw = gateways[i % gateways.length] as GatewayProcess;
        const r = await fetch(`${gw.base}/fuel-api/api/simple-current.php?api_key=${key}`);
        await r.arrayBuffer();
        statuses.push(r.status);
      }
    }),
  );
  return statuses;
}

/**
 * A marker: another account driven past 80%, after everything the test checks. Once its delivery
 * arrives, anything raised before it (a duplicate from the second gateway) has had its turn.
 */
async function marker(gateways: GatewayProcess[], receiver: Receiver, secret: string): Promise<void> {
  const { account, api_key } = await admin(gateways[0] as GatewayProcess, 'POST', '/admin/accounts', {
    plan: 'developer',
  });
  await drive(gateways, api_key, 80);
  await waitFor('the marker delivery', () => thresholds(receiver, secret, account.id).length >= 1);
}

const thresholds = (r: Receiver, secret: string, account: string) =>
  r.verified(secret).filter((g) => g.event.type === 'usage.threshold' && g.event.data['account_id'] === account);

async function setup(t: Test, webhooks?: Record<string, unknown>) {
  const redis = await startRedis(t);
  const file = configFile(redis.url, webhooks);
  const receiver = await startReceiver(t);
  return { redis, file, receiver };
}

t.test('two gateways, parallel requests past 80% and 100%: exactly one verified delivery per threshold', async (t) => {
  const { file, receiver } = await setup(t);
  const gateways = await Promise.all([gatewayProcess(t, file), gatewayProcess(t, file)]);
  const [a, b] = gateways as [GatewayProcess, GatewayProcess];
  const ep = await admin(a, 'POST', '/admin/webhooks', { url: receiver.url, events: ['usage.threshold'] });
  const { account, api_key } = await admin(b, 'POST', '/admin/accounts', { plan: 'developer' });
  const statuses = await drive(gateways, api_key, 300);
  t.equal(statuses.filter((s) => s === 200).length, 100, 'the limit of 100 admitted');
  await waitFor('two threshold deliveries', () => thresholds(receiver, ep.secret, account.id).length >= 2);
  await marker(gateways, receiver, ep.secret);
  const got = thresholds(receiver, ep.secret, account.id);
  t.equal(receiver.verified(ep.secret).length, receiver.got.length, 'every request the receiver got verifies');
  t.equal(got.length, 2, 'exactly two deliveries');
  t.same(got.map((g) => [g.event.data['threshold_percent'], g.event.data['requests_used']]).sort(), [
    [100, 100],
    [80, 80],
  ]);
  t.equal(new Set(got.map((g) => g.headers['webhook-id'])).size, 2, 'two distinct webhook-ids');
  // The dates the answers show: a cached account's period writes them out only when read (quota/entry-spec.ts).
  const answered = await fetch(`${a.base}/fuel-api/api/usage.php?api_key=${api_key}`);
  const { usage } = (await answered.json()) as { usage: Record<string, string> };
  t.match(got[0]?.event.data, {
    account_id: account.id,
    plan: 'developer',
    request_limit: 100,
    period_started_at: usage['period_started_at'],
    period_ends_at: usage['period_ends_at'],
  });
  t.not(usage['period_started_at'], usage['period_ends_at']);
  const listed = await admin(b, 'GET', `/admin/webhooks/${ep.id}/deliveries`);
  t.equal(listed.deliveries.length, 3, 'the two, and the marker');
  t.ok(
    listed.deliveries.every((d: { state: string; attempts: number }) => d.state === 'delivered' && d.attempts === 1),
  );
});

t.test('a receiver down for a while gets the deliveries once it is back', async (t) => {
  const { file, receiver } = await setup(t);
  const gateways = await Promise.all([gatewayProcess(t, file), gatewayProcess(t, file)]);
  const [a, b] = gateways as [GatewayProcess, GatewayProcess];
  const ep = await admin(a, 'POST', '/admin/webhooks', { url: receiver.url, events: ['usage.threshold'] });
  await receiver.stop();
  const { account, api_key } = await admin(b, 'POST', '/admin/accounts', { plan: 'developer' });
  await drive(gateways, api_key, 120);
  await waitFor('failed attempts recorded', async () => {
    const { deliveries } = await admin(a, 'GET', `/admin/webhooks/${ep.id}/deliveries`);
    return deliveries.length === 2 && deliveries.every((d: { attempts: number }) => d.attempts >= 2);
  });
  const { deliveries } = await admin(a, 'GET', `/admin/webhooks/${ep.id}/deliveries`);
  t.match(deliveries[0], { state: 'pending', last_status: null, last_error: /unreachable/, next_attempt: String });
  const metrics = await (await fetch(`${a.admin}/metrics`)).text();
  t.match(metrics, /fuel_gateway_webhook_outbox_depth 2/, 'two deliveries pending in the outbox');
  const age = Number(/^fuel_gateway_webhook_outbox_oldest_age_seconds (\S+)$/m.exec(metrics)?.[1]);
  t.ok(age > 0, `the oldest pending delivery's age is shown (${age} s)`);
  await receiver.start();
  const took = await waitFor('both delivered', () => thresholds(receiver, ep.secret, account.id).length === 2);
  t.comment(`delivered ${took} ms after the receiver came back`);
  t.ok(
    took < scaled(5000),
    `within a retry delay and a round, scaled for a busy machine (${took} ms, bound ${scaled(5000)} ms)`,
  );
  await marker(gateways, receiver, ep.secret);
  t.equal(thresholds(receiver, ep.secret, account.id).length, 2, 'each once');
});

t.test('a gateway killed with -9 while events are pending: another gateway delivers them', async (t) => {
  const { file, receiver } = await setup(t);
  const a = await gatewayProcess(t, file);
  const ep = await admin(a, 'POST', '/admin/webhooks', { url: receiver.url, events: ['usage.threshold'] });
  receiver.mode = 'hang';
  const { account, api_key } = await admin(a, 'POST', '/admin/accounts', { plan: 'developer' });
  await drive([a], api_key, 100);
  await admin(a, 'POST', `/admin/webhooks/${ep.id}/test`);
  await waitFor('the gateway is mid-delivery', () => receiver.hanging >= 1);
  a.child.kill('SIGKILL');
  await new Promise((r) => a.child.once('exit', r));
  receiver.mode = { status: 200 };
  const b = await gatewayProcess(t, file);
  const took = await waitFor(
    'the three events delivered by the other gateway',
    () => {
      const ids = new Set(receiver.verified(ep.secret).map((g) => g.headers['webhook-id']));
      return ids.size === 3 && thresholds(receiver, ep.secret, account.id).length >= 2;
    },
    15_000,
  );
  t.comment(`delivered ${took} ms after the second gateway started (claims last 2·timeout + 1 s = 3 s)`);
  const { deliveries } = await admin(b, 'GET', `/admin/webhooks/${ep.id}/deliveries`);
  t.equal(deliveries.length, 3);
  await waitFor('all recorded', async () =>
    (await admin(b, 'GET', `/admin/webhooks/${ep.id}/deliveries`)).deliveries.every(
      (d: { state: string }) => d.state === 'delivered',
    ),
  );
  t.pass('every delivery is recorded delivered');
});

t.test('Redis killed and restarted from its append-only file: the pending events are still delivered', async (t) => {
  const dir = tempDir('fpg-aof-');
  const redis = await startRedis(t, ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir]);
  const receiver = await startReceiver(t);
  const file = configFile(redis.url);
  const gw = await gatewayProcess(t, file);
  const ep = await admin(gw, 'POST', '/admin/webhooks', { url: receiver.url, events: ['usage.threshold'] });
  await receiver.stop();
  const { account, api_key } = await admin(gw, 'POST', '/admin/accounts', { plan: 'developer' });
  await drive([gw], api_key, 100);
  await waitFor('two deliveries pending', async () => {
    const { deliveries } = await admin(gw, 'GET', `/admin/webhooks/${ep.id}/deliveries`);
    return deliveries.length === 2 && deliveries.every((d: { attempts: number }) => d.attempts >= 1);
  });
  await redis.stop();
  await redis.start();
  await receiver.start();
  const took = await waitFor(
    'both delivered after the restart',
    () => thresholds(receiver, ep.secret, account.id).length === 2,
    15_000,
  );
  t.comment(`delivered ${took} ms after Redis and the receiver were back`);
  t.equal(new Set(thresholds(receiver, ep.secret, account.id).map((g) => g.event.data['threshold_percent'])).size, 2);
});
