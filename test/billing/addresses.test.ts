import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startCloudEventsReceiver, startStripeReceiver } from '../helpers/billing-receivers.js';
import { privateConfig, runCli, serveRefused } from '../helpers/cli.js';
import { startGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

// Its tests share nothing and spend most of their time waiting: they run 2 at a time.
t.jobs = 2;

const STRIPE_KEY = 'rk_test_billing_addresses_0123456789';
const CE_TOKEN = 'ce-token-addresses-0123456789';
process.env.STRIPE_API_KEY = STRIPE_KEY;
process.env.CLOUDEVENTS_TOKEN = CE_TOKEN;

t.test(
  'an exporter whose receiver resolves to loopback never sends it a batch while private addresses are not allowed: its events fail with the reason, and no credential of its URL is shown',
  async (t) => {
    const stripe = await startStripeReceiver(STRIPE_KEY);
    const ce = await startCloudEventsReceiver(CE_TOKEN);
    t.teardown(() => Promise.all([stripe.close(), ce.close()]));
    // Both real receivers listen on 127.0.0.1; `localhost` is a name, so only the send can judge it.
    const local = (url: string): string => url.replace('127.0.0.1', 'localhost');
    const ceUrl = `${local(ce.url).replace('http://', 'http://ce-user:ce-pass@')}/api/v1/events?token=url-token-value`;
    const gw = await startGateway(t, {
      log: { access: false },
      webhooks: { allow_private_addresses: false },
      billing: {
        interval_s: 5,
        timeout_ms: 5000,
        exporters: [
          { type: 'stripe', event_name: 'fuel_api_requests', api_base: local(stripe.url) },
          { type: 'cloudevents', url: ceUrl, source: 'fuel-gateway' },
        ],
      },
    });
    const created = await adminCall(gw, 'POST', '/admin/accounts', {
      plan: 'starter',
      external_ids: { stripe_customer: 'cus_Local1' },
    });
    const key = created.body.api_key as string;
    for (let i = 0; i < 3; i++) t.equal((await gw.get(`/fuel-api/api/simple-current.php?api_key=${key}`)).status, 200);

    type Failure = { exporter: string; last_error: string };
    let failures: Failure[] = [];
    await waitFor(
      "both exporters' events to be refused (or a receiver to be reached)",
      async () => {
        failures = (await adminCall(gw, 'GET', '/admin/billing/failures')).body.failures as Failure[];
        return new Set(failures.map((f) => f.exporter)).size === 2 || stripe.requests.length + ce.requests.length > 0;
      },
      30_000,
    );
    t.equal(stripe.requests.length, 0, 'Stripe receiver: no request');
    t.equal(ce.requests.length, 0, 'CloudEvents receiver: no request');
    t.same([...new Set(failures.map((f) => f.exporter))].sort(), ['cloudevents', 'stripe'], 'both refused');
    for (const f of failures)
      t.match(
        f.last_error,
        /^refused: localhost resolves to 127\.0\.0\.1, a loopback, private, link-local or metadata address \(webhooks\.allow_private_addresses\)$/,
        `${f.exporter}: the reason names the address and the setting`,
      );
    t.match(gw.logs(), /billing export: events refused for good/);
    for (const secret of ['ce-user', 'ce-pass', 'url-token-value'])
      t.notOk(gw.logs().includes(secret), `${secret} is in no log line`);
  },
);

t.test('an exporter at an IP address that is not public stops both `config check` and `serve`', async (t) => {
  for (const url of ['http://u:p@169.254.169.254/ingest', 'http://127.0.0.1:9/ingest', 'http://[::ffff:10.0.0.1]/i']) {
    const exporters = [{ type: 'cloudevents', url, source: 'gw' }];
    const config = privateConfig({ billing: { interval_s: 60, timeout_ms: 1000, exporters } });
    const [check, serve] = await Promise.all([
      runCli(['config', 'check', '--config', config]),
      serveRefused(t, ['--config', config]),
    ]);
    t.equal(check.code, 1, `${url}: config check refuses it`);
    t.equal(serve.code, 1, `${url}: serve refuses it`);
    t.match(check.stderr, /billing\.exporters\.0\.url: .* is a loopback, private, link-local or metadata address/);
    t.equal(serve.stderr, check.stderr, 'the same message');
    t.notOk(check.stderr.includes('u:p'), 'the user info is not shown');
    const allowed = privateConfig({ webhooks: { allow_private_addresses: true }, billing: { exporters } });
    const ok = await runCli(['config', 'check', '--config', allowed]);
    t.equal(ok.code, 0, `${url}: accepted when private addresses are allowed`);
  }
});
