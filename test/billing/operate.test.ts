import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { startStripeReceiver } from '../helpers/billing-receivers.js';
import { gatewayProcess, privateConfig, runCli, serve } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const STRIPE_KEY = 'rk_test_billing_cli_0123456789abcdef';

t.test('the CLI sets external ids, lists the events a billing system refused, and retries them', async (t) => {
  const redis = await startRedis(t);
  const stripe = await startStripeReceiver(STRIPE_KEY);
  t.teardown(() => stripe.close());
  stripe.modes.push({ status: 402, body: '{"error":{"message":"customer has no subscription"}}' });
  const config = privateConfig({
    store: redis.store,
    log: { access: false },
    webhooks: { allow_private_addresses: true },
    billing: {
      interval_s: 5,
      timeout_ms: 5000,
      exporters: [{ type: 'stripe', name: 'stripe-live', event_name: 'api_requests', api_base: stripe.url }],
    },
  });
  const env = { STRIPE_API_KEY: STRIPE_KEY };
  const cli = async (...args: string[]) => {
    const r = await runCli([...args, '--config', config], env);
    return { ...r, json: r.code === 0 ? (JSON.parse(r.stdout) as Record<string, any>) : null };
  };
  const created = await cli('accounts', 'create', '--plan', 'starter', '--stripe-customer', 'cus_Cli1');
  t.equal(created.code, 0, created.stderr);
  t.same(created.json?.account.external_ids, { stripe_customer: 'cus_Cli1' });
  const id = created.json?.account.id as string;
  const set = await cli(
    'accounts',
    'set-external-ids',
    id,
    '--stripe-customer',
    'cus_Cli2',
    '--billing-subject',
    's-2',
  );
  t.same(set.json?.account.external_ids, { stripe_customer: 'cus_Cli2', billing_subject: 's-2' });
  const bad = await cli('accounts', 'set-external-ids', id, '--stripe-customer', 'acct_123');
  t.equal(bad.code, 1);
  t.match(bad.stderr, /external_ids\.stripe_customer: expected a Stripe customer id/);

  const gw = await gatewayProcess(t, config, env);
  const key = created.json?.api_key as string;
  for (let i = 0; i < 3; i++) await fetch(`${gw.base}/fuel-api/api/simple-current.php?api_key=${key}`);
  await waitFor('the refusal', () => stripe.requests.length === 1, 30_000);
  await waitFor(
    'the failure to be recorded',
    async () => (await cli('billing', 'failures')).json?.failures.length === 1,
    30_000,
  );
  const failures = (await cli('billing', 'failures', '--exporter', 'stripe-live')).json?.failures;
  // The three requests are one span, or more when an interval's boundary fell between them.
  t.match(failures, [{ exporter: 'stripe-live', account_id: id, subject: 'cus_Cli2' }]);
  t.ok(failures[0].requests >= 1 && failures[0].requests <= 3);
  t.match(failures[0].last_error, /status 402: .*customer has no subscription/);
  const unknown = await cli('billing', 'failures', '--exporter', 'nope');
  t.match(unknown.stderr, /exporter: no exporter named "nope" \(configured: stripe-live\)/);
  t.equal((await cli('billing', 'retry')).code, 1, 'retry needs --id or --all');
  t.same((await cli('billing', 'retry', '--all')).json, { retried: 1 });
  await waitFor('the retried event to be taken', () => stripe.totals().cus_Cli2 === 3, 30_000);
  t.same((await cli('billing', 'failures')).json, { failures: [] });
});

t.test('a Stripe exporter without STRIPE_API_KEY stops the start with a line that names it', async (t) => {
  const config = privateConfig({
    billing: { interval_s: 60, timeout_ms: 5000, exporters: [{ type: 'stripe', event_name: 'x' }] },
  });
  const child = serve(t, ['--config', config], { STRIPE_API_KEY: '' });
  await child.waitFor(/STRIPE_API_KEY/).catch(() => undefined);
  t.not(await child.stop('SIGTERM').then(() => child.child.exitCode), 0);
  t.match(child.output(), /billing\.exporters\.0 \(stripe\): set the STRIPE_API_KEY environment variable/);
});

t.test(
  'billing config: names must differ, the interval is at least 5 s, and secrets never come from a file',
  async (t) => {
    const base = { type: 'cloudevents', url: 'https://ingest.example/events', source: 'gw' };
    t.throws(
      () =>
        loadConfig({ env: {}, overrides: { billing: { interval_s: 60, timeout_ms: 1000, exporters: [base, base] } } }),
      /billing\.exporters: two exporters have the same name/,
    );
    t.throws(
      () => loadConfig({ env: {}, overrides: { billing: { interval_s: 1, timeout_ms: 1000, exporters: [] } } }),
      /billing\.interval_s: expected at least 5/,
    );
    t.throws(
      () =>
        loadConfig({
          env: {},
          overrides: { billing: { interval_s: 60, timeout_ms: 1000, exporters: [{ ...base, token: 'x' }] } },
        }),
      /token/,
    );
    const checked = await runCli(['config', 'check', '--config', privateConfig({ billing: { exporters: [base] } })], {
      STRIPE_API_KEY: STRIPE_KEY,
      CLOUDEVENTS_TOKEN: 'ce-secret-token-value',
    });
    t.equal(checked.code, 0, checked.stderr);
    t.notMatch(checked.stdout, /rk_test|ce-secret/, 'config check shows no billing secret');
  },
);
