/**
 * Stripe subscriptions mirrored into account plans, tested as Stripe would: events signed with
 * the stripe package's generateTestHeaderString, posted over HTTP to real gateways, on the memory
 * store and on Redis (two gateways sharing it).
 */
import t, { type Test } from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import {
  deliver,
  invoiceEvent,
  type StripeEvent,
  type SubscriptionFacts,
  signatureOf,
  subscriptionEvent,
  WEBHOOK_SECRET,
} from '../helpers/stripe.js';
import { scaled, waitFor } from '../helpers/wait.js';

process.env.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET;

const PLANS = { fuel_starter_monthly: 'starter', fuel_business_monthly: 'business' };
const redis = await startRedis(t);
let prefixes = 0;

async function gateways(t: Test, kind: 'memory' | 'redis', n: number): Promise<TestGateway[]> {
  const store =
    kind === 'memory'
      ? {}
      : {
          type: 'redis',
          redis: { url: redis.url, key_prefix: `t${process.pid}_${++prefixes}:`, command_timeout_ms: scaled(500) },
        };
  const out: TestGateway[] = [];
  for (let i = 0; i < n; i++)
    out.push(await startGateway(t, { store, log: { access: false }, billing: { stripe: { plans: PLANS } } }));
  return out;
}

async function account(gw: TestGateway, plan = 'developer'): Promise<{ id: string; key: string }> {
  const r = await adminCall(gw, 'POST', '/admin/accounts', { plan });
  return { id: r.body.account.id as string, key: r.body.api_key as string };
}

const plan = async (gw: TestGateway, id: string): Promise<{ plan: string; status: string }> => {
  const r = await adminCall(gw, 'GET', `/admin/accounts/${id}`);
  return { plan: r.body.account.plan as string, status: r.body.account.status as string };
};

const NOW_S = (): number => Math.floor(Date.now() / 1000);

function facts(id: string, over: Partial<SubscriptionFacts> = {}): SubscriptionFacts {
  const tag = Math.random().toString(36).slice(2, 10);
  return {
    sub: `sub_${tag}`,
    customer: `cus_${tag}`,
    status: 'active',
    lookupKey: 'fuel_starter_monthly',
    periodEnd: NOW_S() + 30 * 86_400,
    account: id,
    ...over,
  };
}

for (const kind of ['memory', 'redis'] as const) {
  t.test(`${kind}: an event delivered twice is applied once`, async (t) => {
    const [gw] = (await gateways(t, kind, 1)) as [TestGateway];
    const a = await account(gw);
    const e = subscriptionEvent('created', NOW_S(), facts(a.id));
    const started = Date.now();
    const first = await deliver(gw.base, e);
    t.equal(first.status, 200);
    t.ok(Date.now() - started < scaled(2000), 'answered within 2 s');
    t.same(await first.json(), { received: true, duplicate: false });
    await waitFor('the plan change', async () => (await plan(gw, a.id)).plan === 'starter', 2000);
    const second = await deliver(gw.base, e);
    t.equal(second.status, 200);
    t.same(await second.json(), { received: true, duplicate: true }, 'the second delivery is known by its id');
    const audit = gw
      .logs()
      .split('\n')
      .filter((l) => l.includes('"account.update"') && l.includes(a.id));
    t.equal(
      audit.filter((l) => l.includes('"from":"stripe"') && l.includes('"plan"')).length,
      1,
      'one plan change, made by stripe',
    );
    const metrics = (await adminCall(gw, 'GET', '/metrics')).body as string;
    t.match(metrics, /fuel_gateway_stripe_events_total\{result="duplicate"\} 1/);
    t.match(metrics, /fuel_gateway_stripe_events_total\{result="applied"\} 1/);
    const other = { ...e, id: `${e.id}_other`, type: 'customer.created', data: { object: { id: 'cus_x' } } };
    const ignored = await deliver(gw.base, other);
    t.equal(ignored.status, 200, 'another type: 200');
    t.same(await ignored.json(), { received: true, duplicate: false });
    await waitFor('the inbox to empty', async () => (await gw.app.store.stripe.stripeInboxDepth()) === 0, 2000);
    t.match((await plan(gw, a.id)).plan, 'starter', 'and ignored');
  });

  t.test(
    `${kind}: a forged signature, one past the 300 s tolerance, or a body changed after signing: 400, nothing changes`,
    async (t) => {
      const [gw] = (await gateways(t, kind, 1)) as [TestGateway];
      const a = await account(gw);
      const e = subscriptionEvent('created', NOW_S(), facts(a.id));
      const payload = JSON.stringify(e);
      const cases: Array<[string, { signature?: string; body?: string }]> = [
        ['forged', { signature: signatureOf(payload, undefined, 'whsec_not_the_secret') }],
        ['too old', { signature: signatureOf(payload, NOW_S() - 301) }],
        ['body changed', { body: payload.replace('fuel_starter_monthly', 'fuel_business_monthly') }],
        ['no signature', { signature: '' }],
      ];
      for (const [what, over] of cases) {
        const r = await deliver(gw.base, e, over);
        t.equal(r.status, 400, what);
        t.same(await r.json(), { success: false, message: 'Invalid Stripe-Signature.' }, what);
      }
      // Signed, but not an event: refused, and nothing kept that the mirror could not read back.
      for (const body of ['null', '[]', JSON.stringify({ ...e, id: 5 }), JSON.stringify({ ...e, data: {} })]) {
        const r = await deliver(gw.base, body);
        t.equal(r.status, 400, `signed, not an event: ${body.slice(0, 30)}`);
        t.same(await r.json(), { success: false, message: 'Bad request.' });
      }
      t.equal(await gw.app.store.stripe.stripeInboxDepth(), 0, 'none kept');
      // Then the event itself, signed: accepted, so the refusals above did not take its id.
      t.equal((await deliver(gw.base, e)).status, 200);
      await waitFor('the plan change', async () => (await plan(gw, a.id)).plan === 'starter', 2000);
      const metrics = (await adminCall(gw, 'GET', '/metrics')).body as string;
      t.match(metrics, /fuel_gateway_stripe_events_total\{result="signature_failed"\} 4/);
    },
  );
}

/** Every order of `items`. */
function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((x, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((p) => [x, ...p]));
}

for (const kind of ['memory', 'redis'] as const) {
  t.test(`${kind}: a subscription's events in every order end in the state of the newest`, async (t) => {
    const gws = await gateways(t, kind, kind === 'redis' ? 2 : 1);
    const gw = gws[0] as TestGateway;
    const t0 = NOW_S() - 600;
    // created (starter), updated (upgrade to business), updated (past_due), invoice.paid, deleted.
    const story = (f: SubscriptionFacts): StripeEvent[] => [
      subscriptionEvent('created', t0, f),
      subscriptionEvent('updated', t0 + 60, { ...f, lookupKey: 'fuel_business_monthly' }),
      subscriptionEvent('updated', t0 + 120, { ...f, lookupKey: 'fuel_business_monthly', status: 'past_due' }),
      invoiceEvent('paid', t0 + 180, f),
      // Ended: its period is over, so the account is back on the free plan.
      subscriptionEvent('deleted', t0 + 240, {
        ...f,
        lookupKey: 'fuel_business_monthly',
        status: 'canceled',
        periodEnd: t0 + 240,
      }),
    ];
    const orders = permutations([0, 1, 2, 3, 4]);
    t.equal(orders.length, 120);
    const runs = await Promise.all(
      orders.map(async (order) => {
        const a = await account(gw, 'starter');
        const events = story(facts(a.id));
        return { a, order, events };
      }),
    );
    // Each order delivered in sequence; the orders side by side, across the gateways.
    await Promise.all(
      runs.map(async ({ order, events }, i) => {
        for (const j of order) {
          const r = await deliver((gws[(i + j) % gws.length] as TestGateway).base, events[j] as StripeEvent);
          if (r.status !== 200) throw new Error(`event ${j}: ${r.status}`);
        }
      }),
    );
    const stripe = gw.app.store.stripe;
    await waitFor('every event applied', async () => (await stripe.stripeInboxDepth()) === 0, 20_000);
    const wrong: string[] = [];
    for (const { a, order, events } of runs) {
      const held = await stripe.stripeSubscription(a.id);
      const now = await plan(gw, a.id);
      if (
        held?.event_id !== events[4]?.id ||
        held?.status !== 'canceled' ||
        now.plan !== 'developer' ||
        now.status !== 'active'
      )
        wrong.push(`${order.join('')}: ${held?.event_type}/${held?.status} ${now.plan}/${now.status}`);
    }
    t.same(wrong, [], 'every order ends deleted: the free plan, active');
  });

  t.test(`${kind}: the newest state wins when a late update arrives after a past_due`, async (t) => {
    const [gw] = (await gateways(t, kind, 1)) as [TestGateway];
    const a = await account(gw);
    const f = facts(a.id);
    const t0 = NOW_S() - 60;
    await deliver(gw.base, subscriptionEvent('updated', t0 + 10, { ...f, lookupKey: 'fuel_business_monthly' }));
    await deliver(gw.base, subscriptionEvent('created', t0, f));
    await waitFor('applied', async () => (await gw.app.store.stripe.stripeInboxDepth()) === 0, 2000);
    t.same(await plan(gw, a.id), { plan: 'business', status: 'active' }, 'the older created does not undo the upgrade');
    const metrics = (await adminCall(gw, 'GET', '/metrics')).body as string;
    t.match(metrics, /fuel_gateway_stripe_events_total\{result="ignored_old"\} 1/);

    // Stripe's `created` is in seconds: a checkout's invoice.paid and subscription.created, and an
    // update and a deletion, share one second, and arrive in either order.
    const now = NOW_S();
    const sameSecond = async (events: (f: SubscriptionFacts) => StripeEvent[]): Promise<string[]> => {
      const ids: string[] = [];
      for (const i of [0, 1]) {
        // The customer linked already (an operator's, or the checkout's event came first).
        const f = facts('');
        const made = await adminCall(gw, 'POST', '/admin/accounts', {
          plan: 'developer',
          external_ids: { stripe_customer: f.customer },
        });
        ids.push(made.body.account.id as string);
        const list = events({ ...f, account: made.body.account.id as string });
        // Each applied before the next arrives: this order, not the inbox's.
        for (const e of i === 0 ? list : [...list].reverse()) {
          await deliver(gw.base, e);
          await waitFor('applied', async () => (await gw.app.store.stripe.stripeInboxDepth()) === 0, 2000);
        }
      }
      return Promise.all(ids.map(async (id) => (await plan(gw, id)).plan));
    };
    t.same(
      await sameSecond((f) => [invoiceEvent('paid', now, f), subscriptionEvent('created', now, f)]),
      ['starter', 'starter'],
      "a checkout's invoice.paid in the same second as its subscription: the plan given in either order",
    );
    t.same(
      await sameSecond((f) => [
        subscriptionEvent('updated', now, { ...f, lookupKey: 'fuel_business_monthly' }),
        subscriptionEvent('deleted', now, { ...f, status: 'canceled', periodEnd: now - 1 }),
      ]),
      ['developer', 'developer'],
      'an update and a deletion in the same second: deleted in either order',
    );
  });
}

t.test('redis: two gateways given the same event at the same moment apply it once', async (t) => {
  const [g1, g2] = (await gateways(t, 'redis', 2)) as [TestGateway, TestGateway];
  const a = await account(g1);
  const e = subscriptionEvent('created', NOW_S(), facts(a.id));
  const answers = await Promise.all([deliver(g1.base, e), deliver(g2.base, e)]);
  t.same(
    answers.map((r) => r.status),
    [200, 200],
  );
  const bodies = (await Promise.all(answers.map((r) => r.json()))) as Array<{ duplicate: boolean }>;
  t.same(bodies.map((b) => b.duplicate).sort(), [false, true], 'one gateway kept it, the other knew it');
  await waitFor('the plan change', async () => (await plan(g2, a.id)).plan === 'starter', 2000);
  const changes = [g1, g2].flatMap((g) =>
    g
      .logs()
      .split('\n')
      .filter((l) => l.includes('"account.update"') && l.includes(a.id) && l.includes('"plan"')),
  );
  t.equal(changes.length, 1, 'one plan change in the audit log of both');
});

t.test('the route is in the API document, and a body over 1 MiB is refused unread with 413', async (t) => {
  const [gw] = (await gateways(t, 'memory', 1)) as [TestGateway];
  const doc = (await (await gw.get('/fuel-api/openapi.json')).json()) as {
    paths: Record<string, { post?: { responses: Record<string, unknown> } }>;
  };
  t.same(Object.keys(doc.paths['/billing/stripe/webhook']?.post?.responses ?? {}).sort(), [
    '200',
    '400',
    '413',
    '503',
    'default',
  ]);
  const big = JSON.stringify({ id: 'evt_big', pad: 'x'.repeat(1024 * 1024) });
  const r = await deliver(gw.base, big);
  t.equal(r.status, 413);
  t.same(await r.json(), { success: false, message: 'Event too large (at most 1 MiB).' });
  t.equal(await gw.app.store.stripe.stripeInboxDepth(), 0);
});
