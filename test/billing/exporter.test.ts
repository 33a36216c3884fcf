import { readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { adminCall } from '../helpers/admin.js';
import { type BillingReceiver, startCloudEventsReceiver, startStripeReceiver } from '../helpers/billing-receivers.js';
import { storeTimeouts } from '../helpers/cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

// Its tests share nothing and spend most of their time waiting: they run 2 at a time.
t.jobs = 2;

const SIMPLE = '/fuel-api/api/simple-current.php';
const STRIPE_KEY = 'rk_test_billing_exporter_0123456789';
const CE_TOKEN = 'ce-token-0123456789';
process.env.STRIPE_API_KEY = STRIPE_KEY;
process.env.CLOUDEVENTS_TOKEN = CE_TOKEN;
// An interval's pass, plus a busy machine's margin.
const PASS_MS = 30_000;

interface Setup {
  gw: TestGateway;
  stripe: BillingReceiver;
  ce: BillingReceiver;
}

async function setup(t: Test, store: Record<string, unknown>, timeoutMs = 10_000): Promise<Setup> {
  const stripe = await startStripeReceiver(STRIPE_KEY);
  const ce = await startCloudEventsReceiver(CE_TOKEN);
  t.teardown(() => Promise.all([stripe.close(), ce.close()]));
  // Two tests share this process' event loop: Redis gets the busy machine's timeouts.
  const redis = store.type === 'redis' ? { redis: { ...storeTimeouts(), ...(store.redis as object) } } : {};
  const gw = await startGateway(t, {
    store: { ...store, ...redis },
    log: { access: false },
    // The receivers are on loopback, which the exporters reach only when private addresses are allowed.
    webhooks: { allow_private_addresses: true },
    billing: {
      interval_s: 5,
      timeout_ms: timeoutMs,
      exporters: [
        { type: 'stripe', event_name: 'fuel_api_requests', api_base: stripe.url },
        { type: 'cloudevents', url: `${ce.url}/api/v1/events`, source: 'fuel-gateway' },
      ],
    },
  });
  return { gw, stripe, ce };
}

async function account(gw: TestGateway, externalIds?: Record<string, string>): Promise<{ id: string; key: string }> {
  const body: Record<string, unknown> = { plan: 'starter' };
  if (externalIds) body.external_ids = externalIds;
  const r = await adminCall(gw, 'POST', '/admin/accounts', body);
  return { id: r.body.account.id as string, key: r.body.api_key as string };
}

async function requests(gw: TestGateway, key: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) if ((await gw.get(`${SIMPLE}?api_key=${key}`)).status !== 200) throw new Error('not 200');
}

const totalsEqual = (r: BillingReceiver, want: Record<string, number>) => (): boolean =>
  JSON.stringify(Object.entries(r.totals()).sort()) === JSON.stringify(Object.entries(want).sort());

for (const kind of ['memory', 'redis'] as const) {
  t.test(
    `${kind} store: each account's requests reach Stripe and the CloudEvents ingest exactly once, and match the ledger`,
    async (t) => {
      const store = kind === 'redis' ? (await startRedis(t)).store : { type: 'memory' };
      const { gw, stripe, ce } = await setup(t, store);
      const a = await account(gw, { stripe_customer: 'cus_Aaaa1' });
      const b = await account(gw, { stripe_customer: 'cus_Bbbb2', billing_subject: 'fleet-b' });
      const c = await account(gw);
      await requests(gw, a.key, 3);
      await requests(gw, b.key, 5);
      await requests(gw, c.key, 2);
      await waitFor('the first pass', totalsEqual(stripe, { cus_Aaaa1: 3, cus_Bbbb2: 5 }), PASS_MS);
      await waitFor('the first pass (CloudEvents)', totalsEqual(ce, { [a.id]: 3, 'fleet-b': 5, [c.id]: 2 }), PASS_MS);
      t.pass('an account without a Stripe customer is not sent to Stripe; CloudEvents gets every account');
      await requests(gw, a.key, 4);
      await requests(gw, c.key, 1);
      await waitFor('the next pass', totalsEqual(stripe, { cus_Aaaa1: 7, cus_Bbbb2: 5 }), PASS_MS);
      await waitFor('the next pass (CloudEvents)', totalsEqual(ce, { [a.id]: 7, 'fleet-b': 5, [c.id]: 3 }), PASS_MS);
      t.same(
        [...stripe.requests, ...ce.requests].filter((r) => r.problems.length > 0),
        [],
        "every request passed the receivers' schemas",
      );
      const ledger: Record<string, number> = {};
      for (const x of [a, b, c])
        ledger[x.id] = (await adminCall(gw, 'GET', `/admin/accounts/${x.id}`)).body.usage.requests_used as number;
      t.same(ledger, { [a.id]: 7, [b.id]: 5, [c.id]: 3 }, "the receivers' totals are the ledger's");
      const metrics = await (await fetch(`http://127.0.0.1:${gw.app.adminAddress.port}/metrics`)).text();
      // 3 events, or more when an interval's boundary fell between one account's requests (a busy machine).
      t.match(
        metrics,
        new RegExp(`fuel_gateway_billing_events_total\\{exporter="stripe",result="sent"\\} ${stripe.taken.size}\n`),
        'one event sent for each the receiver took',
      );
      t.match(metrics, /fuel_gateway_billing_lag_seconds\{exporter="cloudevents"\} 0/);
    },
  );
}

t.test(
  'a receiver answering 500 and then 200 gets the same events again, unchanged, and counts them once',
  async (t) => {
    const redis = await startRedis(t);
    const { gw, stripe } = await setup(t, redis.store);
    stripe.modes.push({ status: 500, retryAfter: '1' }, { status: 500, retryAfter: '1' });
    const a = await account(gw, { stripe_customer: 'cus_Retry1' });
    await requests(gw, a.key, 6);
    await waitFor('the retries to be taken', totalsEqual(stripe, { cus_Retry1: 6 }), PASS_MS);
    const identifiers = stripe.requests.map((r) => new URLSearchParams(r.body).get('identifier'));
    t.same(identifiers, [identifiers[0], identifiers[0], identifiers[0]], 'one event, sent three times');
    t.same(
      stripe.requests.map((r) => r.answered),
      [500, 500, 200],
    );
  },
);

t.test('a receiver that takes an event and never answers: the resend after the timeout is dropped by it', async (t) => {
  const redis = await startRedis(t);
  const { gw, stripe } = await setup(t, redis.store, 1000);
  stripe.modes.push({ status: 200, thenHang: true }, 'hang');
  const a = await account(gw, { stripe_customer: 'cus_Hang1' });
  await requests(gw, a.key, 4);
  await waitFor('three sends', () => stripe.requests.length >= 3, PASS_MS * 2);
  t.same(stripe.totals(), { cus_Hang1: 4 }, 'counted once, though sent three times');
  t.equal(new Set(stripe.requests.map((r) => new URLSearchParams(r.body).get('identifier'))).size, 1);
});

t.test('a 400 is listed as a failure and not sent again, until `billing retry` sends it unchanged', async (t) => {
  const { gw, stripe } = await setup(t, { type: 'memory' });
  stripe.modes.push({ status: 400, body: '{"error":{"type":"invalid_request_error","message":"No such customer"}}' });
  const a = await account(gw, { stripe_customer: 'cus_Missing1' });
  await requests(gw, a.key, 2);
  await waitFor('the refusal', () => stripe.requests.length === 1, PASS_MS);
  await waitFor(
    'the failure to be listed',
    async () => (await adminCall(gw, 'GET', '/admin/billing/failures')).body.failures.length === 1,
    PASS_MS,
  );
  const listed = (await adminCall(gw, 'GET', '/admin/billing/failures')).body.failures;
  t.match(listed, [{ exporter: 'stripe', account_id: a.id, subject: 'cus_Missing1', attempts: 1 }]);
  // The two requests are one span, or two when an interval's boundary fell between them.
  const refused = listed[0].requests as number;
  t.ok(refused === 1 || refused === 2, `the refused span holds ${refused} of the 2 requests`);
  t.match(listed[0].last_error, /status 400: .*No such customer/);
  // Two more passes go by: a refused event is not sent again by itself.
  await requests(gw, a.key, 1);
  await waitFor('the next span to be taken', totalsEqual(stripe, { cus_Missing1: 3 - refused }), PASS_MS);
  t.equal(
    stripe.requests.filter((r) => new URLSearchParams(r.body).get('identifier') === listed[0].id).length,
    1,
    'the refused event was sent once',
  );
  const retried = await adminCall(gw, 'POST', '/admin/billing/retry', { id: listed[0].id });
  t.same(retried.body, { retried: 1 });
  await waitFor('the retried event to be taken', totalsEqual(stripe, { cus_Missing1: 3 }), PASS_MS);
  t.same((await adminCall(gw, 'GET', '/admin/billing/failures')).body.failures, []);
  t.match(gw.logs(), /"action":"billing.retry"/);
  t.notMatch(gw.logs(), new RegExp(STRIPE_KEY), 'the Stripe key is in no log line');
});

t.test("a receiver's error that echoes the secret: neither the failure list nor any log line carries it", async (t) => {
  const { gw, stripe, ce } = await setup(t, { type: 'memory' });
  stripe.modes.push({ status: 400, body: `{"error":{"message":"bad credentials: Bearer ${STRIPE_KEY}"}}` });
  ce.modes.push({ status: 422, body: `rejected token ${CE_TOKEN}` });
  const a = await account(gw, { stripe_customer: 'cus_Echo1' });
  await requests(gw, a.key, 1);
  await waitFor(
    'both refusals to be listed',
    async () => (await adminCall(gw, 'GET', '/admin/billing/failures')).body.failures.length === 2,
    PASS_MS,
  );
  const listed = JSON.stringify((await adminCall(gw, 'GET', '/admin/billing/failures')).body);
  t.match(listed, /bad credentials: Bearer \[REDACTED\]/, 'the error is listed, the secret replaced');
  for (const secret of [STRIPE_KEY, CE_TOKEN]) {
    t.notMatch(listed, secret, 'not in the failure list');
    t.notMatch(gw.logs(), secret, 'not in any log line');
  }
});

/** An error body whose text reaches the 200th character inside `echo`, as it is cut to 200. */
const atTheCut = (echo: string): string => {
  const lead = '{"error":{"message":"you sent Authorization: ';
  return `${lead}${'x'.repeat(183 - lead.length)} Bearer ${echo}"}}`;
};
const reversed = (s: string): string => [...s].reverse().join('');
const uEscaped = (s: string): string =>
  [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

t.test(
  "a receiver's error that echoes the secret across the cut, in base64, reversed or \\u-escaped: no error text kept, logged or listed holds the secret or 4 characters of its start",
  async (t) => {
    const { gw, stripe, ce } = await setup(t, { type: 'memory' });
    const spellings = [
      STRIPE_KEY,
      Buffer.from(STRIPE_KEY).toString('base64'),
      reversed(STRIPE_KEY),
      uEscaped(STRIPE_KEY),
    ];
    for (const echo of spellings) stripe.modes.push({ status: 400, body: atTheCut(echo) });
    ce.modes.push({ status: 422, body: atTheCut(CE_TOKEN) });
    for (const n of [1, 2, 3, 4]) await requests(gw, (await account(gw, { stripe_customer: `cus_Echo${n}` })).key, 1);
    await waitFor(
      'every refusal to be listed',
      async () => (await adminCall(gw, 'GET', '/admin/billing/failures')).body.failures.length === 8,
      PASS_MS,
    );
    const listed = (
      (await adminCall(gw, 'GET', '/admin/billing/failures')).body.failures as Array<{
        last_error: string;
      }>
    ).map((f) => f.last_error);
    const logged = gw
      .logs()
      .split('\n')
      .filter((l) => l.includes('billing export: events refused for good'))
      .map((l) => String(JSON.parse(l).error));
    t.equal(logged.length, 5, 'each refusal logged');
    // What is left of each spelling once cut to 200: a start of it, 4 characters or more.
    const starts = [STRIPE_KEY.slice(0, 4), CE_TOKEN.slice(0, 4), ...spellings.slice(1).map((s) => s.slice(0, 8))];
    for (const [i, text] of [...listed, ...logged].entries()) {
      t.match(text, /^status 4\d\d/, `error ${i}: its status is kept`);
      t.same(
        starts.filter((s) => text.includes(s)),
        [],
        `error ${i} (${text.slice(-40)}): no start of a secret in any spelling`,
      );
    }
  },
);

t.test('a receiver answering 307 and then 200 gets the event again, unchanged, and counts it once', async (t) => {
  const { gw, stripe } = await setup(t, { type: 'memory' });
  stripe.modes.push({ status: 307, location: `${stripe.url}/v1/billing/meter_events`, retryAfter: '1' });
  const a = await account(gw, { stripe_customer: 'cus_Moved1' });
  await requests(gw, a.key, 3);
  await waitFor('the event to be taken after the redirect', totalsEqual(stripe, { cus_Moved1: 3 }), PASS_MS);
  t.same(
    stripe.requests.map((r) => r.answered),
    [307, 200],
  );
  t.same(
    stripe.requests.map((r) => r.body),
    [stripe.requests[0]?.body, stripe.requests[0]?.body],
    'the same event, unchanged',
  );
  t.same((await adminCall(gw, 'GET', '/admin/billing/failures')).body.failures, [], 'not listed as failed');
  t.match(gw.logs(), /"error":"status 307[^"]*meter_events/, 'the log line names the redirect');
});

t.test(
  'every exporter request names the gateway and its release in User-Agent; Stripe gets the pinned Stripe-Version',
  async (t) => {
    const { gw, stripe, ce } = await setup(t, { type: 'memory' });
    const a = await account(gw, { stripe_customer: 'cus_Version1' });
    await requests(gw, a.key, 1);
    await waitFor('both receivers to take the event', () => stripe.taken.size === 1 && ce.taken.size === 1, PASS_MS);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const r of [...stripe.requests, ...ce.requests])
      t.equal(r.headers['user-agent'], `fuel-price-gateway/${version} (billing exporter)`);
    t.same(
      stripe.requests.map((r) => r.headers['stripe-version']),
      ['2026-10-28.endive'],
      "the default: the version stripe 23.1.0's SDK pins",
    );
    t.equal(ce.requests[0]?.headers['stripe-version'], undefined, 'not sent to a CloudEvents ingest');
  },
);

t.test('an exporter may pin another Stripe-Version', async (t) => {
  const stripe = await startStripeReceiver(STRIPE_KEY);
  t.teardown(() => stripe.close());
  const gw = await startGateway(t, {
    log: { access: false },
    webhooks: { allow_private_addresses: true },
    billing: {
      interval_s: 5,
      timeout_ms: 10_000,
      exporters: [
        { type: 'stripe', event_name: 'fuel_api_requests', api_base: stripe.url, stripe_version: '2025-03-31.basil' },
      ],
    },
  });
  const a = await account(gw, { stripe_customer: 'cus_Version2' });
  await requests(gw, a.key, 1);
  await waitFor('the event to be taken', () => stripe.taken.size === 1, PASS_MS);
  t.equal(stripe.requests[0]?.headers['stripe-version'], '2025-03-31.basil');
});

t.test('retrying takes an id or all=true, and refuses anything else without retrying', async (t) => {
  const { gw, stripe } = await setup(t, { type: 'memory' });
  stripe.modes.push({ status: 400 }, { status: 400 });
  const a = await account(gw, { stripe_customer: 'cus_Two1' });
  const b = await account(gw, { stripe_customer: 'cus_Two2' });
  await requests(gw, a.key, 1);
  await requests(gw, b.key, 2);
  await waitFor(
    'both refusals',
    async () => (await adminCall(gw, 'GET', '/admin/billing/failures')).body.failures.length === 2,
    PASS_MS,
  );
  for (const [path, body] of [
    ['/admin/billing/retry?id=x', {}],
    ['/admin/billing/retry?all=true', {}],
    ['/admin/billing/retry', {}],
    ['/admin/billing/retry', null],
    ['/admin/billing/retry', { all: 'yes' }],
    ['/admin/billing/retry', { id: 'x', all: true }],
  ] as const) {
    const r = await adminCall(gw, 'POST', path, body);
    t.equal(r.status, 400, `${path} ${JSON.stringify(body)}: 400`);
    t.ok(Array.isArray(r.body.problems) && r.body.problems.length > 0, 'with problems');
  }
  t.equal((await adminCall(gw, 'GET', '/admin/billing/failures')).body.failures.length, 2, 'nothing retried');
  const [first] = (await adminCall(gw, 'GET', '/admin/billing/failures')).body.failures;
  t.same((await adminCall(gw, 'POST', '/admin/billing/retry', { id: first.id })).body, { retried: 1 });
  t.same((await adminCall(gw, 'POST', '/admin/billing/retry', { all: true })).body, { retried: 1 });
});

t.test('PATCHing external_ids changes the ids given and keeps the others; null removes one, or all', async (t) => {
  const { gw } = await setup(t, { type: 'memory' });
  const a = await account(gw, { stripe_customer: 'cus_Keep1', billing_subject: 'fleet-1' });
  const patch = async (external_ids: unknown) =>
    (await adminCall(gw, 'PATCH', `/admin/accounts/${a.id}`, { external_ids })).body.account?.external_ids;
  t.same(await patch({ billing_subject: 'fleet-2' }), { stripe_customer: 'cus_Keep1', billing_subject: 'fleet-2' });
  t.same(await patch({ stripe_customer: null }), { billing_subject: 'fleet-2' });
  t.same(await patch({}), { billing_subject: 'fleet-2' }, 'an empty object changes nothing');
  t.equal(await patch(null), undefined, 'null removes them all');
});
