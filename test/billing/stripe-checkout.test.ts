/**
 * The portal's plan page bought through Stripe Checkout, end to end: a developer account
 * chooses a plan, the gateway asks Stripe (a loopback receiver) for a Checkout Session with the
 * stripe package, the test plays Stripe's part (the signed checkout.session.completed and
 * customer.subscription.created), and the next simple-current.php on another gateway shows the
 * new plan.
 */
import Stripe from 'stripe';
import t, { type Test } from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { type Person, signIn } from '../helpers/portal.js';
import { startRedis } from '../helpers/redis.js';
import { startSmtp } from '../helpers/smtp.js';
import {
  checkoutCompleted,
  deliver,
  type StripeApi,
  type StripeApiRequest,
  startStripeApi,
  subscriptionEvent,
  WEBHOOK_SECRET,
} from '../helpers/stripe.js';
import { scaled, waitFor } from '../helpers/wait.js';

const STRIPE_KEY = 'rk_test_checkout_0123456789abcdef';
process.env.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET;
process.env.STRIPE_API_KEY = STRIPE_KEY;
const SIMPLE = '/fuel-api/api/simple-current.php';

const smtp = await startSmtp(t);
const redis = await startRedis(t);
let prefixes = 0;

async function setup(t: Test, kind: 'memory' | 'redis'): Promise<{ gws: TestGateway[]; api: StripeApi }> {
  const api = await startStripeApi();
  t.teardown(() => api.close());
  const store =
    kind === 'memory'
      ? {}
      : {
          type: 'redis',
          redis: { url: redis.url, key_prefix: `co${process.pid}_${++prefixes}:`, command_timeout_ms: scaled(500) },
        };
  const settings = {
    store,
    log: { access: false },
    portal: { smtp: { url: smtp.url } },
    billing: {
      stripe: {
        plans: { fuel_starter_monthly: 'starter', fuel_business_monthly: 'business' },
        checkout: true,
        api_base: api.url,
      },
    },
  };
  const gws = [await startGateway(t, settings)];
  if (kind === 'redis') gws.push(await startGateway(t, settings));
  return { gws, api };
}

/** A form post from the portal's page, as a browser sends it (no redirect followed). */
const submit = (gw: TestGateway, p: Person, action: string, fields: Record<string, string>): Promise<Response> =>
  gw.get(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: p.cookie, origin: gw.base, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, csrf_token: p.csrf }).toString(),
  });

/** What the stripe package itself sends for `call`, to the same receiver. */
async function packageSends(api: StripeApi, call: (s: Stripe) => Promise<unknown>): Promise<StripeApiRequest[]> {
  const u = new URL(api.url);
  const before = api.requests.length;
  await call(new Stripe(STRIPE_KEY, { host: u.hostname, port: Number(u.port), protocol: 'http' }));
  return api.requests.slice(before);
}

const shape = (r: StripeApiRequest) => ({
  method: r.method,
  path: r.path,
  form: r.form,
  authorization: r.headers.authorization,
  version: r.headers['stripe-version'],
});

for (const kind of ['memory', 'redis'] as const) {
  t.test(
    `${kind}: a developer account upgrades through Checkout; the next answer on another gateway is starter`,
    async (t) => {
      const { gws, api } = await setup(t, kind);
      const [g1, g2] = [gws[0] as TestGateway, gws.at(-1) as TestGateway];
      const p = await signIn(g1, smtp, `buyer-${kind}@example.test`);
      const made = (await (await p.call('POST', '/portal/api/keys', { name: 'ci' })).json()) as { api_key: string };
      const first = (await (await g2.get(`${SIMPLE}?api_key=${made.api_key}`)).json()) as {
        usage: Record<string, unknown>;
      };
      t.match(first.usage, { plan_type: 'developer', request_limit: 100 }, 'a developer trial to begin with');

      const home = await (await g1.get('/portal/', { headers: { cookie: p.cookie } })).text();
      t.match(home, /<h2>Plan<\/h2>/);
      t.match(home, /<dt>Allowance<\/dt><dd>100 requests per period<\/dd>/);
      t.match(home, /name="price" value="fuel_starter_monthly"><button>Upgrade to starter \(2,000 requests\)/);
      t.notMatch(home, /Manage billing/, 'no customer yet: nothing to manage');

      const chosen = await submit(g1, p, '/portal/api/billing/checkout', { price: 'fuel_starter_monthly' });
      t.equal(chosen.status, 303);
      const location = chosen.headers.get('location') ?? '';
      t.match(location, /^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_\d+$/, 'sent on to the session Stripe made');
      const sent = api.requests.map(shape);
      const base = g1.base;
      const expected = await packageSends(api, async (s) => {
        const list = await s.prices.list({ lookup_keys: ['fuel_starter_monthly'], active: true, limit: 1 });
        await s.checkout.sessions.create({
          mode: 'subscription',
          line_items: [{ price: list.data[0]?.id as string, quantity: 1 }],
          client_reference_id: p.account,
          subscription_data: { metadata: { fpg_account: p.account } },
          success_url: `${base}/portal/?checkout=done`,
          cancel_url: `${base}/portal/?checkout=cancelled`,
        });
      });
      t.same(sent, expected.map(shape), 'the same paths and form fields as the stripe package sends for that call');
      t.match(sent[1]?.form, {
        mode: 'subscription',
        'line_items[0][price]': 'price_for_fuel_starter_monthly',
        client_reference_id: p.account,
      });

      // Stripe's part: the customer paid.
      const now = Math.floor(Date.now() / 1000);
      const customer = `cus_Buyer${kind}${process.pid}`;
      const sub = `sub_Buyer${kind}`;
      t.equal((await deliver(g1.base, checkoutCompleted(now, p.account, customer, sub))).status, 200);
      const created = subscriptionEvent('created', now, {
        sub,
        customer,
        status: 'active',
        lookupKey: 'fuel_starter_monthly',
        periodEnd: now + 30 * 86_400,
        account: p.account,
      });
      t.equal((await deliver(g1.base, created)).status, 200);
      await waitFor(
        'the plan change',
        async () => (await adminCall(g1, 'GET', `/admin/accounts/${p.account}`)).body.account.plan === 'starter',
        2000,
      );
      // Announced: the other gateway's next answer has it, within a second.
      await waitFor(
        'the other gateway to answer as starter',
        async () => {
          const u = (
            (await (await g2.get(`${SIMPLE}?api_key=${made.api_key}`)).json()) as { usage: Record<string, unknown> }
          ).usage;
          return u.plan_type === 'starter' && u.request_limit === 2000;
        },
        1000,
      );
      const shown = await adminCall(g1, 'GET', `/admin/accounts/${p.account}`);
      t.equal(shown.body.account.external_ids.stripe_customer, customer, 'the customer linked');

      const page = await (await g1.get('/portal/', { headers: { cookie: p.cookie } })).text();
      t.match(page, /Manage billing/);
      t.notMatch(page, /Upgrade to/, 'subscribed: the plan changes in Stripe, not by a second subscription');
      const asked = api.requests.length;
      const second = await submit(g1, p, '/portal/api/billing/checkout', { price: 'fuel_business_monthly' });
      t.equal(second.status, 409, 'a second checkout: 409');
      t.equal(api.requests.length, asked, 'and Stripe was not asked');
      const manage = await submit(g1, p, '/portal/api/billing/manage', {});
      t.equal(manage.status, 303);
      t.match(manage.headers.get('location'), /^https:\/\/billing\.stripe\.com\/p\/session\/test_\d+$/);
      const portalSent = shape(api.requests.at(-1) as StripeApiRequest);
      const portalExpected = await packageSends(api, (s) =>
        s.billingPortal.sessions.create({ customer, return_url: `${base}/portal/` }),
      );
      t.same(
        portalSent,
        shape(portalExpected[0] as StripeApiRequest),
        'the customer-portal session, as the package sends it',
      );
      t.equal(portalSent.authorization, `Bearer ${STRIPE_KEY}`);
      if (kind === 'memory') await attacks(t, g1, p, api);
    },
  );
}

/** What a member who may not buy, a forged form, and a Stripe that hangs get: no session, a clear answer. */
async function attacks(t: Test, gw: TestGateway, owner: Person, api: StripeApi): Promise<void> {
  const asked = api.requests.length;
  const devEmail = `dev-${process.pid}@example.test`;
  t.equal((await owner.call('POST', '/portal/api/members', { email: devEmail, role: 'developer' })).status, 201);
  const dev = await signIn(gw, smtp, devEmail);
  const price = { price: 'fuel_business_monthly' };
  t.equal((await submit(gw, dev, '/portal/api/billing/checkout', price)).status, 403, 'a developer member: 403');
  t.equal((await submit(gw, dev, '/portal/api/billing/manage', {})).status, 403);
  const noCsrf = await gw.get('/portal/api/billing/checkout', {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: owner.cookie, origin: gw.base, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(price).toString(),
  });
  t.equal(noCsrf.status, 403, 'no CSRF token: 403');
  const buyer = await signIn(gw, smtp, `buyer2-${process.pid}@example.test`);
  const forged = await submit(gw, buyer, '/portal/api/billing/checkout', { price: 'price_1Cheap' });
  t.equal(forged.status, 400, 'a price on no offer: 400');
  t.same(await forged.json(), { success: false, message: 'Bad request: price is not on offer.' });
  t.equal(api.requests.length, asked, 'and Stripe was not asked');

  api.hang = true;
  const started = Date.now();
  const hung = await submit(gw, buyer, '/portal/api/billing/checkout', price);
  // Each call to Stripe is given 5 s, and checkout makes two: a margin on the 10 s.
  t.ok(Date.now() - started < 10_000 + scaled(2000), `answered in ${Date.now() - started} ms`);
  t.equal(hung.status, 504, 'Stripe silent: 504');
  t.same(await hung.json(), { success: false, message: 'Upstream service timed out.' });
  t.equal(api.requests.length, asked + 1, 'asked once, not retried');

  await api.close();
  const down = await submit(gw, buyer, '/portal/api/billing/checkout', price);
  t.equal(down.status, 502, 'Stripe unreachable: 502');
  t.same(await down.json(), { success: false, message: 'Upstream service unavailable.' });
}
