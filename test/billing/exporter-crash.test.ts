import t from 'tap';
import { startStripeReceiver } from '../helpers/billing-receivers.js';
import { gatewayProcess, privateConfig } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const STRIPE_KEY = 'rk_test_billing_crash_0123456789';

t.test(
  'the sending gateway killed -9 mid-request: another gateway sends the same event, the receiver keeps it once, and the totals match the ledger',
  async (t) => {
    const redis = await startRedis(t);
    const stripe = await startStripeReceiver(STRIPE_KEY);
    t.teardown(() => stripe.close());
    // The first send is taken by the receiver, whose answer never comes: the gateway dies waiting.
    stripe.modes.push({ status: 200, thenHang: true });
    const config = privateConfig({
      store: { type: 'redis', redis: { url: redis.url } },
      log: { access: false },
      webhooks: { allow_private_addresses: true },
      billing: {
        interval_s: 5,
        timeout_ms: 120_000,
        exporters: [{ type: 'stripe', event_name: 'fuel_api_requests', api_base: stripe.url }],
      },
    });
    const env = { STRIPE_API_KEY: STRIPE_KEY };
    const first = await gatewayProcess(t, config, env);
    const created = await fetch(`${first.admin}/admin/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'starter', external_ids: { stripe_customer: 'cus_Crash1' } }),
    });
    const { api_key, account } = (await created.json()) as { api_key: string; account: { id: string } };
    for (let i = 0; i < 5; i++)
      t.equal((await fetch(`${first.base}/fuel-api/api/simple-current.php?api_key=${api_key}`)).status, 200);
    await waitFor('the first send to reach the receiver', () => stripe.hanging === 1, 60_000);
    await first.stop('SIGKILL');

    const second = await gatewayProcess(t, config, env);
    // The lease of the killed gateway runs out (15 s), then the second sends the event again.
    await waitFor('the resend', () => stripe.requests.length >= 2, 90_000);
    const ids = stripe.requests.map((r) => new URLSearchParams(r.body).get('identifier'));
    t.same(ids, [ids[0], ids[0]], 'the same event, with the same identifier');
    t.same(
      stripe.requests.map((r) => r.body),
      [stripe.requests[0]?.body, stripe.requests[0]?.body],
      'sent unchanged',
    );
    t.same(stripe.totals(), { cus_Crash1: 5 }, 'kept once');
    const shown = (await (await fetch(`${second.admin}/admin/accounts/${account.id}`)).json()) as {
      usage: { requests_used: number };
    };
    t.equal(shown.usage.requests_used, 5, "the receiver's total is the ledger's");
    t.same(
      stripe.requests.filter((r) => r.problems.length > 0),
      [],
      'every request valid',
    );
  },
);
