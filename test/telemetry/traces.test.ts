import t, { type Test } from 'tap';
import { hashKey } from '../../src/keys/key-generator.js';
import { adminCall } from '../helpers/admin.js';
import { newAccount } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startOrigin, type TestOrigin } from '../helpers/origin.js';
import { type DecodedSpan, type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp.js';
import { startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { scaled, sleep, waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const SERVER = 2;
const CLIENT = 3;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

const traced = (receiver: OtlpReceiver, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  telemetry: { traces: { enabled: true, endpoint: receiver.url, sample_ratio: 1, ...extra } },
});

async function setup(
  t: Test,
  overrides: Record<string, unknown>,
  sample_ratio = 1,
): Promise<{ receiver: OtlpReceiver; origin: TestOrigin; gw: TestGateway; key: string; accountId: string }> {
  const receiver = await startOtlpReceiver(t);
  const origin = await startOrigin(t);
  const gw = await startGateway(t, {
    ...traced(receiver, { sample_ratio }),
    upstream: { url: origin.url, api_key: origin.key, poll_interval_ms: 60_000, proxy_paths: ['/origin/*'] },
    ...overrides,
  });
  await waitFor('first poll', async () => (await gw.get('/readyz')).status === 200);
  const { api_key, account } = await newAccount(gw, { plan: 'starter' }, Date.now());
  return { receiver, origin, gw, key: api_key, accountId: account.id };
}

const spanWith = (r: OtlpReceiver, pred: (s: DecodedSpan) => boolean): DecodedSpan | undefined => r.spans.find(pred);

t.test(
  "a metered request and a pass-through miss from a trusted proxy continue its trace: server span, Redis call linked, origin try with the origin span's traceparent",
  async (t) => {
    const redis = await startRedis(t);
    const { receiver, origin, gw, key, accountId } = await setup(t, {
      store: redis.store,
      server: { trusted_proxies: ['127.0.0.1'] },
    });
    // The first request of a key reads its account; the second takes the warm path.
    await (await gw.get(`${SIMPLE}?api_key=${key}`)).arrayBuffer();
    const metered = await gw.get(`${SIMPLE}?api_key=${key}`, {
      headers: { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'vendor=abc' },
    });
    t.equal(metered.status, 200);
    await waitFor('the metered span', () => spanWith(receiver, (s) => s.traceId === TRACE) !== undefined, 5000);
    const server = spanWith(receiver, (s) => s.traceId === TRACE) as DecodedSpan;
    t.equal(server.kind, SERVER);
    t.equal(server.name, `GET ${SIMPLE}`, 'named by route');
    t.equal(server.parentSpanId, PARENT, "the proxy's span is its parent");
    t.equal(server.service, 'fuel-gateway');
    t.match(server.attributes, {
      'http.request.method': 'GET',
      'http.route': SIMPLE,
      'http.response.status_code': 200,
      'url.path': SIMPLE,
      'client.address': '127.0.0.1',
      'fpg.account.plan': 'starter',
      'fpg.outcome': 'served',
    });
    t.equal(server.links.length, 1, 'linked to the store call that counted it');
    const call = spanWith(receiver, (s) => s.spanId === server.links[0]?.spanId) as DecodedSpan;
    t.ok(call, 'the store call span was exported');
    t.equal(call.kind, CLIENT);
    t.match(call.attributes, { 'db.system.name': 'redis', 'db.operation.name': 'EVALSHA' });
    t.ok(Number(call.attributes['db.operation.batch.size']) >= 1, 'with its batch size');

    const trace2 = `${'a'.repeat(31)}b`;
    const miss = await gw.get(`/origin/echo?api_key=${key}`, { headers: { traceparent: `00-${trace2}-${PARENT}-01` } });
    t.equal(miss.status, 200);
    await miss.arrayBuffer();
    await waitFor('the pass-through spans', () => receiver.spans.filter((s) => s.traceId === trace2).length >= 2, 5000);
    const passServer = spanWith(receiver, (s) => s.traceId === trace2 && s.kind === SERVER) as DecodedSpan;
    const originTry = spanWith(receiver, (s) => s.traceId === trace2 && s.kind === CLIENT) as DecodedSpan;
    t.equal(passServer.name, 'GET /origin/*');
    t.equal(typeof passServer.attributes['fpg.cache'], 'string', 'the cache outcome is named');
    t.equal(originTry.parentSpanId, passServer.spanId, "the origin try is the request's child");
    t.match(originTry.attributes, { 'http.request.method': 'GET', 'server.address': '127.0.0.1' });
    const seen = origin.seen.find((s) => s.path === '/origin/echo');
    t.equal(
      seen?.headers['traceparent'],
      `00-${trace2}-${originTry.spanId}-01`,
      "the origin got the try's traceparent",
    );

    // Nothing that names the account or a key is in any span.
    const all = receiver.bodies.join('\n');
    for (const [what, secret] of [
      ['key', key],
      ['key hash', hashKey(key)],
      ['account id', accountId],
      ['service key', origin.key],
    ] as const)
      t.notOk(all.includes(secret), `no ${what} in any exported body`);
    t.ok(receiver.contentTypes.has('application/x-protobuf'), 'OTLP/HTTP protobuf by default');
  },
);

t.test(
  'an origin poll is a CLIENT span of a trace of its own: the origin gets its traceparent, no span the service key',
  async (t) => {
    const { receiver, origin } = await setup(t, {});
    await waitFor(
      'the first poll span',
      () => receiver.spans.some((s) => s.kind === CLIENT && String(s.attributes['url.full']).endsWith('/current.php')),
      5000,
    );
    const poll = spanWith(
      receiver,
      (s) => s.kind === CLIENT && String(s.attributes['url.full']).endsWith('/current.php'),
    ) as DecodedSpan;
    t.equal(poll.parentSpanId, '', 'a root: a poll serves no request');
    t.match(poll.attributes, { 'http.request.method': 'GET', 'http.response.status_code': 200 });
    t.equal(poll.attributes['url.full'], `${origin.url}/fuel-api/api/current.php`, 'its URL without the query');
    const polled = origin.seen.filter((s) => s.path === '/fuel-api/api/current.php');
    t.ok(
      polled.some((s) => s.headers['traceparent'] === `00-${poll.traceId}-${poll.spanId}-01`),
      "the origin got the poll span's traceparent",
    );
    t.notOk(receiver.bodies.join('\n').includes(origin.key), 'no service key in any span');
  },
);

t.test("an untrusted client's traceparent starts a new trace linked to it, and cannot force sampling", async (t) => {
  const receiver = await startOtlpReceiver(t);
  const all = await startGateway(t, traced(receiver));
  const none = await startGateway(t, traced(receiver, { sample_ratio: 0 }));
  const forced = `00-${TRACE}-${PARENT}-01`;
  t.equal((await all.get('/healthz', { headers: { traceparent: forced } })).status, 200);
  await waitFor('the span', () => receiver.spans.some((s) => s.kind === SERVER), 5000);
  const span = receiver.spans.find((s) => s.kind === SERVER) as DecodedSpan;
  t.not(span.traceId, TRACE, 'not continued');
  t.equal(span.parentSpanId, '', 'a root span');
  t.same(span.links, [{ traceId: TRACE, spanId: PARENT }], 'linked to the client trace');
  const before = receiver.spans.length;
  for (let i = 0; i < 20; i++) await (await none.get('/healthz', { headers: { traceparent: forced } })).arrayBuffer();
  await sleep(scaled(1500));
  t.equal(receiver.spans.length, before, 'a sampled flag from an untrusted client samples nothing at ratio 0');
});

t.test('unsampled requests export nothing, not even the Redis calls that counted them', async (t) => {
  const redis = await startRedis(t);
  const { receiver, gw, key } = await setup(t, { store: redis.store, server: { trusted_proxies: ['127.0.0.1'] } }, 0);
  await Promise.all(Array.from({ length: 30 }, async () => (await gw.get(`${SIMPLE}?api_key=${key}`)).arrayBuffer()));
  // A trusted proxy's sampled trace last: once its spans are in, anything sent before them is too.
  const marker = `${'c'.repeat(31)}d`;
  await (
    await gw.get(`${SIMPLE}?api_key=${key}`, { headers: { traceparent: `00-${marker}-${PARENT}-01` } })
  ).arrayBuffer();
  await waitFor("the sampled request's span", () => receiver.spans.some((s) => s.traceId === marker), 5000);
  await sleep(scaled(1200));
  const server = spanWith(receiver, (s) => s.traceId === marker) as DecodedSpan;
  const linked = new Set(server.links.map((l) => l.spanId));
  const others = receiver.spans.filter((s) => s.traceId !== marker && !linked.has(s.spanId));
  t.same(others, [], "no span but the sampled request's and the store call it links to");
  t.equal(linked.size, 1, 'the sampled request still links its store call');
});

t.test('a webhook delivery is a CLIENT span with its event type and attempt, and no secret', async (t) => {
  const receiver = await startOtlpReceiver(t);
  const gw = await startGateway(t, {
    ...traced(receiver),
    webhooks: { allow_private_addresses: true, allow_http: true, retry_delays_ms: [100], poll_interval_ms: 50 },
    demo_accounts: false,
  });
  const hook = await startReceiver(t);
  const { body } = await adminCall(gw, 'POST', '/admin/webhooks', {
    url: `${hook.url}?token=s3cret`,
    events: ['key.created'],
  });
  const { body: account } = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  const { body: made } = await adminCall(gw, 'POST', `/admin/accounts/${account.account.id}/keys`, { name: 'ci' });
  await waitFor('the delivery', () => hook.got.length > 0, 5000);
  await waitFor('its span', () => receiver.spans.some((s) => s.name === 'POST webhook'), 5000);
  const span = receiver.spans.find((s) => s.name === 'POST webhook') as DecodedSpan;
  t.equal(span.kind, CLIENT);
  t.match(span.attributes, {
    'fpg.event.type': 'key.created',
    'fpg.delivery.attempt': 1,
    'http.request.method': 'POST',
    'http.response.status_code': 204,
  });
  const all = receiver.bodies.join('\n');
  t.notOk(all.includes('s3cret'), 'no query of the endpoint URL');
  t.notOk(all.includes(body.secret as string), 'no signing secret');
  t.notOk(all.includes(account.account.id as string), 'no account id');
  t.notOk(all.includes(account.api_key as string), 'no key');
  t.notOk(all.includes(made.api_key as string), 'no new key');
});
