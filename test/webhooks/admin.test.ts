import t, { type Test } from 'tap';
import { ENDPOINT_CONCURRENCY } from '../../src/store/events/interface.js';
import { adminCall } from '../helpers/admin.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startReceiver } from '../helpers/receiver.js';
import { scaled, waitFor } from '../helpers/wait.js';

const FAST = {
  allow_private_addresses: true,
  allow_http: true,
  retry_delays_ms: [100, 100],
  poll_interval_ms: 50,
  timeout_ms: 1000,
};

async function gateway(t: Test, webhooks: Record<string, unknown> = FAST): Promise<TestGateway> {
  return startGateway(t, { webhooks, demo_accounts: false, log: { access: false } });
}

const deliveries = async (gw: TestGateway, id: string) =>
  (await adminCall(gw, 'GET', `/admin/webhooks/${id}/deliveries`)).body.deliveries as Array<Record<string, unknown>>;

t.test('an endpoint is created with a secret shown once, listed without it, and removed', async (t) => {
  const gw = await gateway(t);
  const receiver = await startReceiver(t);
  const created = await adminCall(gw, 'POST', '/admin/webhooks', {
    url: receiver.url,
    events: ['prices.published', 'usage.threshold'],
    description: 'billing',
  });
  t.equal(created.status, 201);
  const body = created.body as Record<string, unknown>;
  t.match(body, { url: receiver.url, events: ['prices.published', 'usage.threshold'], account_id: null });
  t.match(body.id, /^wh_/);
  t.match(body.secret, /^whsec_[A-Za-z0-9+/=]+$/);
  t.ok(!Number.isNaN(Date.parse(body.created_at as string)), 'created_at is a time');
  const listed = await adminCall(gw, 'GET', '/admin/webhooks');
  t.equal(listed.status, 200);
  t.equal(listed.body.webhooks.length, 1);
  t.notOk('secret' in listed.body.webhooks[0], 'the list never shows the secret');
  t.notOk(gw.logs().includes(body.secret as string), 'the secret is in no log line (audit included)');
  t.match(gw.logs(), /admin webhook.create/);
  const removed = await adminCall(gw, 'DELETE', `/admin/webhooks/${body.id}`);
  t.equal(removed.status, 200);
  t.equal((await adminCall(gw, 'GET', '/admin/webhooks')).body.webhooks.length, 0);
  t.equal((await adminCall(gw, 'DELETE', `/admin/webhooks/${body.id}`)).status, 404);
});

t.test('bad endpoints are refused with the field named', async (t) => {
  const gw = await gateway(t, { ...FAST, allow_private_addresses: false, allow_http: false });
  const cases: Array<[unknown, RegExp]> = [
    [{ url: 'https://example.com/h', events: [] }, /events/],
    [{ url: 'https://example.com/h', events: ['usage.nope'] }, /events/],
    [{ url: 'not a url', events: ['prices.published'] }, /url/],
    [{ url: 'http://93.184.216.34/h', events: ['prices.published'] }, /https is required/],
    [
      { url: 'http://127.0.0.1:9/h', events: ['prices.published'] },
      /https is required \(webhooks\.allow_http\); and 127\.0\.0\.1 is a loopback.*\(webhooks\.allow_private_addresses\)$/,
    ],
    [{ url: 'http://localhost:9/h', events: ['prices.published'] }, /allow_http\); and localhost is a loopback/],
    [{ url: 'https://127.0.0.1/h', events: ['prices.published'] }, /127\.0\.0\.1.*loopback, private/],
    [{ url: 'https://localhost:9/h', events: ['prices.published'] }, /localhost resolves to .*loopback, private/],
    [{ url: 'https://[::1]/h', events: ['prices.published'] }, /::1/],
    [{ url: 'https://[::ffff:127.0.0.1]/h', events: ['prices.published'] }, /resolves to/],
    [{ url: 'https://169.254.169.254/latest/meta-data', events: ['prices.published'] }, /169\.254\.169\.254/],
    [{ url: 'https://10.1.2.3/h', events: ['prices.published'] }, /10\.1\.2\.3/],
    [{ url: 'https://user:pw@93.184.216.34/h', events: ['prices.published'] }, /credentials/],
    [{ url: 'https://93.184.216.34/h', events: ['usage.threshold'], account_id: 'acct_none' }, /no account/],
    [{ url: 'https://93.184.216.34/h', events: ['prices.published'], extra: 1 }, /extra/],
  ];
  for (const [body, message] of cases) {
    const r = await adminCall(gw, 'POST', '/admin/webhooks', body);
    t.equal(r.status, 400, JSON.stringify(body));
    t.match(r.body.message, message, JSON.stringify(body));
  }
  t.equal((await adminCall(gw, 'GET', '/admin/webhooks')).body.webhooks.length, 0, 'none was stored');
  const ok = await adminCall(gw, 'POST', '/admin/webhooks', {
    url: 'https://93.184.216.34/h',
    events: ['prices.published'],
  });
  t.equal(ok.status, 201, 'a public https address is accepted');
});

t.test('a test event is delivered signed, verified by standardwebhooks, and listed as delivered', async (t) => {
  const gw = await gateway(t);
  const receiver = await startReceiver(t);
  const { body: ep } = await adminCall(gw, 'POST', '/admin/webhooks', {
    url: receiver.url,
    events: ['prices.published'],
  });
  const sent = await adminCall(gw, 'POST', `/admin/webhooks/${ep.id}/test`);
  t.equal(sent.status, 202);
  t.match(sent.body, { type: 'webhook.test', event_id: /^msg_/ });
  await waitFor('the test event', () => receiver.got.length === 1);
  const [got] = receiver.verified(ep.secret);
  t.ok(got, 'the signature verifies with standardwebhooks');
  t.equal(got?.headers['webhook-id'], sent.body.event_id);
  t.match(got?.headers['webhook-signature'], /^v1,[A-Za-z0-9+/=]+$/);
  t.match(got?.event, { type: 'webhook.test', data: { webhook_id: ep.id } });
  t.ok(!Number.isNaN(Date.parse(got?.event.timestamp ?? '')), 'the body has its timestamp');
  await waitFor('recorded', async () => (await deliveries(gw, ep.id))[0]?.state === 'delivered');
  t.match((await deliveries(gw, ep.id))[0], {
    event_id: sent.body.event_id,
    type: 'webhook.test',
    attempts: 1,
    last_status: 204,
    next_attempt: null,
  });
  const metrics = (await adminCall(gw, 'GET', '/metrics')).body as string;
  t.match(metrics, /fuel_gateway_webhook_deliveries_total\{result="delivered"\} 1/);
  t.match(metrics, /fuel_gateway_webhook_outbox_depth 0/);
});

t.test('after a rotation both secrets sign for a day: two v1 signatures, each verifies', async (t) => {
  const gw = await gateway(t);
  const receiver = await startReceiver(t);
  const { body: ep } = await adminCall(gw, 'POST', '/admin/webhooks', {
    url: receiver.url,
    events: ['prices.published'],
  });
  const rotated = await adminCall(gw, 'POST', `/admin/webhooks/${ep.id}/rotate-secret`);
  t.equal(rotated.status, 200);
  t.not(rotated.body.secret, ep.secret);
  const until = Date.parse(rotated.body.previous_secret_expires_at);
  t.ok(Math.abs(until - Date.now() - 86_400_000) < 60_000, 'the old secret signs for 24 h');
  await adminCall(gw, 'POST', `/admin/webhooks/${ep.id}/test`);
  await waitFor('the test event', () => receiver.got.length === 1);
  const signatures = receiver.got[0]?.headers['webhook-signature']?.split(' ') ?? [];
  t.equal(signatures.length, 2);
  t.ok(signatures.every((s) => s.startsWith('v1,')));
  t.equal(receiver.verified(ep.secret).length, 1, 'the old secret verifies');
  t.equal(receiver.verified(rotated.body.secret).length, 1, 'the new secret verifies');
  t.notOk(gw.logs().includes(rotated.body.secret), 'the new secret is in no log line');
});

t.test('a failing receiver is retried on the schedule, then the delivery is failed and visible', async (t) => {
  const gw = await gateway(t);
  const receiver = await startReceiver(t);
  receiver.mode = { status: 500 };
  const { body: ep } = await adminCall(gw, 'POST', '/admin/webhooks', {
    url: receiver.url,
    events: ['prices.published'],
  });
  await adminCall(gw, 'POST', `/admin/webhooks/${ep.id}/test`);
  await waitFor('failed', async () => (await deliveries(gw, ep.id))[0]?.state === 'failed');
  t.equal(receiver.got.length, 3, 'the first attempt and two retries (retry_delays_ms has two)');
  t.equal(new Set(receiver.got.map((g) => g.headers['webhook-id'])).size, 1, 'one webhook-id for every attempt');
  t.match((await deliveries(gw, ep.id))[0], {
    attempts: 3,
    last_status: 500,
    last_error: 'status 500',
    next_attempt: null,
  });
  const gaps = receiver.got.slice(1).map((g, i) => g.at - (receiver.got[i]?.at ?? 0));
  t.ok(
    gaps.every((g) => g >= 80),
    `each retry waited its delay less jitter (${gaps.join(', ')} ms)`,
  );
  const metrics = (await adminCall(gw, 'GET', '/metrics')).body as string;
  t.match(metrics, /fuel_gateway_webhook_deliveries_total\{result="retrying"\} 2/);
  t.match(metrics, /fuel_gateway_webhook_deliveries_total\{result="failed"\} 1/);
});

t.test('a redirect is not followed, and counts as a failure', async (t) => {
  const gw = await gateway(t, { ...FAST, retry_delays_ms: [60_000] });
  const receiver = await startReceiver(t);
  receiver.mode = { status: 307, headers: { location: `http://127.0.0.1:${receiver.port}/elsewhere` } };
  const { body: ep } = await adminCall(gw, 'POST', '/admin/webhooks', {
    url: receiver.url,
    events: ['prices.published'],
  });
  await adminCall(gw, 'POST', `/admin/webhooks/${ep.id}/test`);
  await waitFor('recorded', async () => (await deliveries(gw, ep.id))[0]?.attempts === 1);
  t.match((await deliveries(gw, ep.id))[0], { state: 'pending', last_status: 307 });
  t.same(
    receiver.got.map((g) => g.path),
    ['/hook'],
    'nothing went to the redirect target',
  );
  const d = (await deliveries(gw, ep.id))[0] as { next_attempt: string };
  t.ok(Date.parse(d.next_attempt) - Date.now() > 40_000, 'the retry waits its delay');
});

t.test('a receiver that never answers times out, and the API does not slow down meanwhile', async (t) => {
  const TIMEOUT = scaled(3000);
  const gw = await gateway(t, { ...FAST, timeout_ms: TIMEOUT, retry_delays_ms: [60_000] });
  const receiver = await startReceiver(t);
  const { body: account } = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'business' });
  const url = `/fuel-api/api/simple-current.php?api_key=${account.api_key}`;
  const timeRequests = async (n: number, until = Number.POSITIVE_INFINITY): Promise<number[]> => {
    const out: number[] = [];
    for (let i = 0; i < n && performance.now() < until; i++) {
      const start = performance.now();
      const r = await gw.get(url);
      await r.arrayBuffer();
      out.push(performance.now() - start);
    }
    return out.sort((a, b) => a - b);
  };
  const before = await timeRequests(100);
  receiver.mode = 'hang';
  const { body: ep } = await adminCall(gw, 'POST', '/admin/webhooks', {
    url: receiver.url,
    events: ['prices.published'],
  });
  // As many as the store hands out at once for one endpoint: all of them hang together.
  for (let i = 0; i < ENDPOINT_CONCURRENCY; i++) await adminCall(gw, 'POST', `/admin/webhooks/${ep.id}/test`);
  await waitFor('the receiver holds the attempts', () => receiver.hanging === ENDPOINT_CONCURRENCY);
  // Sent in the first third of the deliveries' timeout (beside the bench 100 took longer than it
  // all): a request that waited for a delivery would end only after the delivery had timed out.
  const during = await timeRequests(100, performance.now() + TIMEOUT / 3);
  const median = (xs: number[]): number => xs[Math.floor(xs.length / 2)] as number;
  t.comment(
    `API median ${median(before).toFixed(2)} ms before, ${median(during).toFixed(2)} ms while ${ENDPOINT_CONCURRENCY} deliveries hang`,
  );
  // The slack is scaled: beside the bench the load moves between the two samples by itself.
  t.ok(median(during) < median(before) * 3 + scaled(5), 'the median does not move beyond noise');
  // A timing bound here failed beside the bench (one request in 100 took 1.5 s by itself). What
  // proves it: every request was answered while every delivery was still in its first attempt.
  const held = await deliveries(gw, ep.id);
  t.ok(
    held.length === ENDPOINT_CONCURRENCY && held.every((d) => d.attempts === 0),
    `no request waits for a delivery: all answered while the deliveries hang (attempts ${held.map((d) => d.attempts)})`,
  );
  await waitFor(
    'timeouts recorded',
    async () => {
      const ds = await deliveries(gw, ep.id);
      return ds.length === ENDPOINT_CONCURRENCY && ds.every((d) => d.last_error === 'timeout');
    },
    10_000,
  );
  t.pass('each hanging attempt ended at webhooks.timeout_ms and was recorded as a timeout');
});

t.test('an answer is read to at most 1 KiB: a receiver streaming forever still counts as delivered', async (t) => {
  const gw = await gateway(t);
  const { createServer } = await import('node:http');
  let closed = false;
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200);
    const timer = setInterval(() => res.write(Buffer.alloc(512, 97)), 5);
    res.on('close', () => {
      clearInterval(timer);
      closed = true;
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  const port = (server.address() as { port: number }).port;
  const { body: ep } = await adminCall(gw, 'POST', '/admin/webhooks', {
    url: `http://127.0.0.1:${port}/`,
    events: ['prices.published'],
  });
  await adminCall(gw, 'POST', `/admin/webhooks/${ep.id}/test`);
  const took = await waitFor('delivered', async () => (await deliveries(gw, ep.id))[0]?.state === 'delivered');
  t.ok(took < scaled(900), `recorded within ${took} ms, before the 1 s timeout`);
  await waitFor('the gateway hung up', () => closed);
  server.closeAllConnections();
});
