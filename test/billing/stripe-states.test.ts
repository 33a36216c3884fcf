/**
 * What each subscription state does to its account (docs/billing.md "The state table"), and what
 * operators see of it: the admin API, the CLI's `billing stripe-status` and the unmatched list.
 */
import t, { type Test } from 'tap';
import { adminCall } from '../helpers/admin.js';
import { privateConfig, runCli } from '../helpers/cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { deliver, invoiceEvent, type SubscriptionFacts, subscriptionEvent, WEBHOOK_SECRET } from '../helpers/stripe.js';
import { scaled, waitFor } from '../helpers/wait.js';

process.env.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET;
const PLANS = { fuel_starter_monthly: 'starter', fuel_business_monthly: 'business' };
const UNPAID = 'Pay your Fuel API invoice to continue.';
const DAY_S = 86_400;
const redis = await startRedis(t);
let prefixes = 0;

async function gateway(t: Test, kind: 'memory' | 'redis'): Promise<{ gw: TestGateway; config: string }> {
  const prefix = `st${process.pid}_${++prefixes}:`;
  const store =
    kind === 'memory'
      ? {}
      : { type: 'redis', redis: { url: redis.url, key_prefix: prefix, command_timeout_ms: scaled(500) } };
  const billing = { stripe: { plans: PLANS, unpaid_message: UNPAID } };
  const gw = await startGateway(t, { store, log: { access: false }, billing });
  return { gw, config: privateConfig({ store, billing }) };
}

const NOW_S = (): number => Math.floor(Date.now() / 1000);
let seq = 0;
const facts = (account: string, over: Partial<SubscriptionFacts> = {}): SubscriptionFacts => ({
  sub: `sub_st${process.pid}x${++seq}`,
  customer: `cus_st${process.pid}x${seq}`,
  status: 'active',
  lookupKey: 'fuel_starter_monthly',
  periodEnd: NOW_S() + 30 * DAY_S,
  account,
  ...over,
});

async function newAccount(gw: TestGateway, body: Record<string, unknown> = { plan: 'developer' }): Promise<string> {
  return (await adminCall(gw, 'POST', '/admin/accounts', body)).body.account.id as string;
}
const shown = async (gw: TestGateway, id: string) => (await adminCall(gw, 'GET', `/admin/accounts/${id}`)).body;
const settled = (gw: TestGateway) => () =>
  waitFor('the inbox to empty', async () => (await gw.app.store.stripe.stripeInboxDepth()) === 0, 2000);

t.test(
  'redis: past due beyond the grace makes the account inactive; a later invoice.paid makes it active',
  async (t) => {
    const { gw, config } = await gateway(t, 'redis');
    const made = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'developer' });
    const [id, key] = [made.body.account.id as string, made.body.api_key as string];
    const f = facts(id);
    const t0 = NOW_S() - 5 * DAY_S;
    await deliver(gw.base, subscriptionEvent('created', t0, f));
    // Past due four days ago: the three days of grace are over.
    await deliver(gw.base, subscriptionEvent('updated', t0 + DAY_S, { ...f, status: 'past_due' }));
    await settled(gw)();
    let body = await shown(gw, id);
    t.match(
      body.account,
      { plan: 'starter', status: 'inactive', status_reason: 'unpaid' },
      'the plan kept, the account inactive',
    );
    const refused = await gw.get(`/fuel-api/api/simple-current.php?api_key=${key}`);
    t.equal(refused.status, 403);
    t.same(await refused.json(), { success: false, message: UNPAID }, 'refused with billing.stripe.unpaid_message');
    t.match(body.stripe_subscription, {
      id: f.sub,
      customer: f.customer,
      status: 'past_due',
      price: 'fuel_starter_monthly',
      plan: 'starter',
      current_period_end: new Date(f.periodEnd * 1000).toISOString(),
      past_due_since: new Date((t0 + DAY_S) * 1000).toISOString(),
      grace_ends_at: new Date((t0 + 4 * DAY_S) * 1000).toISOString(),
      suspended: true,
      last_event: { type: 'customer.subscription.updated' },
    });
    const cli = await runCli(['billing', 'stripe-status', id, '--config', config]);
    t.equal(cli.code, 0, cli.stderr);
    t.match(JSON.parse(cli.stdout), {
      account_id: id,
      plan: 'starter',
      status: 'inactive',
      stripe_customer: f.customer,
      stripe_subscription: { id: f.sub, status: 'past_due', suspended: true },
    });
    await deliver(gw.base, invoiceEvent('paid', NOW_S(), f));
    await settled(gw)();
    body = await shown(gw, id);
    t.match(body.account, { plan: 'starter', status: 'active' }, 'paid: active again');
    t.equal(body.account.status_reason, undefined);
    t.equal((await gw.get(`/fuel-api/api/simple-current.php?api_key=${key}`)).status, 200);
    t.match(body.stripe_subscription, { status: 'active', suspended: false, past_due_since: null });
  },
);

t.test('memory: past due within the grace keeps the account active, with the grace shown', async (t) => {
  const { gw } = await gateway(t, 'memory');
  const id = await newAccount(gw);
  const f = facts(id);
  await deliver(gw.base, subscriptionEvent('updated', NOW_S() - 60, { ...f, status: 'past_due' }));
  await settled(gw)();
  const body = await shown(gw, id);
  t.match(body.account, { plan: 'starter', status: 'active' });
  t.equal(body.stripe_subscription.suspended, false);
  t.ok(Date.parse(body.stripe_subscription.grace_ends_at) > Date.now() + 2 * DAY_S * 1000);
});

t.test('an account an operator disabled is not enabled by a payment', async (t) => {
  const { gw } = await gateway(t, 'memory');
  const id = await newAccount(gw, { plan: 'developer', status: 'inactive' });
  const f = facts(id);
  await deliver(gw.base, subscriptionEvent('created', NOW_S() - 60, f));
  await deliver(gw.base, invoiceEvent('paid', NOW_S(), f));
  await settled(gw)();
  t.match((await shown(gw, id)).account, { plan: 'starter', status: 'inactive' });

  // Made inactive for non-payment; an operator enables it, then disables it for a reason of their own.
  const other = await newAccount(gw);
  const g = facts(other);
  await deliver(gw.base, subscriptionEvent('created', NOW_S() - 5 * DAY_S, g));
  await deliver(gw.base, subscriptionEvent('updated', NOW_S() - 4 * DAY_S, { ...g, status: 'past_due' }));
  await settled(gw)();
  t.match((await shown(gw, other)).account, { status: 'inactive', status_reason: 'unpaid' });
  for (const status of ['active', 'inactive'])
    t.equal((await adminCall(gw, 'PATCH', `/admin/accounts/${other}`, { status })).status, 200);
  await deliver(gw.base, invoiceEvent('paid', NOW_S(), g));
  await settled(gw)();
  t.match((await shown(gw, other)).account, { status: 'inactive' }, "paid: the operator's disabling stays");
});

for (const kind of ['memory', 'redis'] as const) {
  t.test(
    `${kind}: an unmapped price changes nothing, is listed as unmatched, and logged by its lookup key`,
    async (t) => {
      const { gw, config } = await gateway(t, kind);
      const id = await newAccount(gw);
      const e = subscriptionEvent('created', NOW_S(), facts(id, { lookupKey: 'fuel_gold_monthly' }));
      await deliver(gw.base, e);
      await settled(gw)();
      t.match((await shown(gw, id)).account, { plan: 'developer', status: 'active' }, 'nothing changed');
      const listed = await adminCall(gw, 'GET', '/admin/billing/stripe/unmatched');
      t.equal(listed.status, 200);
      t.match(listed.body.unmatched, [
        {
          event_id: e.id,
          event_type: 'customer.subscription.created',
          account_id: id,
          price: 'fuel_gold_monthly',
          reason: 'price "fuel_gold_monthly" is in no billing.stripe.plans mapping',
        },
      ]);
      t.match(gw.logs(), /lookup key fuel_gold_monthly maps to no plan/);
      // The CLI reads the store itself: Redis is shared, the memory store is the gateway's own.
      if (kind === 'redis') {
        const cli = await runCli(['billing', 'stripe-unmatched', '--config', config]);
        t.same(JSON.parse(cli.stdout), listed.body, 'the CLI lists the same');
      }
    },
  );

  t.test(
    `${kind}: a customer is set when the account has none, and never replaced: a conflict is unmatched`,
    async (t) => {
      const { gw } = await gateway(t, kind);
      const id = await newAccount(gw, { plan: 'developer', external_ids: { stripe_customer: 'cus_Theirs1' } });
      const e = subscriptionEvent('created', NOW_S(), facts(id, { customer: 'cus_Other2' }));
      await deliver(gw.base, e);
      await settled(gw)();
      const body = await shown(gw, id);
      t.match(body.account, { plan: 'developer', external_ids: { stripe_customer: 'cus_Theirs1' } });
      const listed = await adminCall(gw, 'GET', '/admin/billing/stripe/unmatched');
      t.match(listed.body.unmatched, [
        { event_id: e.id, reason: `account ${id} has Stripe customer cus_Theirs1; the event names cus_Other2` },
      ]);
      // An operator's customer id finds the account without the metadata the portal's checkout sets.
      const f = facts('', { customer: 'cus_Theirs1' });
      delete f.account;
      await deliver(gw.base, subscriptionEvent('created', NOW_S(), f));
      await settled(gw)();
      t.match((await shown(gw, id)).account, { plan: 'starter' }, 'found by its stripe_customer');
      // The metadata names an account that does not exist: listed at once, not waited on for an hour.
      const gone = subscriptionEvent('created', NOW_S(), facts('acct_0000000000000000'));
      await deliver(gw.base, gone);
      await settled(gw)();
      t.match((await adminCall(gw, 'GET', '/admin/billing/stripe/unmatched')).body.unmatched[0], {
        event_id: gone.id,
        account_id: 'acct_0000000000000000',
        reason: 'no account acct_0000000000000000',
      });
    },
  );
}

t.test('a subscription deleted before its period ends keeps its plan until then, then the free plan', async (t) => {
  const { gw } = await gateway(t, 'memory');
  const id = await newAccount(gw);
  const f = facts(id, { lookupKey: 'fuel_business_monthly' });
  await deliver(gw.base, subscriptionEvent('created', NOW_S() - 60, f));
  const endS = NOW_S() + 2;
  await deliver(gw.base, subscriptionEvent('deleted', NOW_S(), { ...f, status: 'canceled', periodEnd: endS }));
  await settled(gw)();
  t.match((await shown(gw, id)).account, { plan: 'business' }, 'paid until the period ends');
  // The period's end, then the mirror's look at its timers (every 5 s), then a margin.
  await waitFor('the free plan', async () => (await shown(gw, id)).account.plan === 'developer', 9000);
  t.ok(Date.now() >= endS * 1000, 'not before the period ended');
});
