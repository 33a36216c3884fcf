import t from 'tap';
import { configReference } from '../../src/config/reference.js';
import { adminCall } from '../helpers/admin.js';
import { privateConfig, runCli } from '../helpers/cli.js';
import { startGateway } from '../helpers/gateway.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

t.test('config check masks the credentials of every URL and every secret value, and nothing else', async (t) => {
  const r = await runCli(['config', 'check'], {
    UPSTREAM_URL: 'http://origin-user:origin-pass@origin.test:8000/base?api_key=query-secret&region=coastal',
    UPSTREAM_API_KEY: 'svc/Key+With=Odd&chars~0123',
    // A password with an "@" in it: the user info ends at the last one.
    REDIS_URL: 'redis://gateway:redis-p@ss@redis.test:6379/0',
    ADMIN_TOKEN: 'admin-token-value',
  });
  t.equal(r.code, 0, r.stderr);
  for (const secret of ['origin-user', 'origin-pass', 'query-secret', 'svc/Key', 'redis-p', 'ss@redis', 'admin-token'])
    t.notOk(r.stdout.includes(secret), `${secret} is not printed`);
  const printed = JSON.parse(r.stdout) as {
    upstream: { url: string; api_key: string };
    store: { redis: { url: string } };
    listen: { admin: { token: string } };
  };
  t.equal(
    printed.upstream.url,
    'http://***@origin.test:8000/base?api_key=***&region=coastal',
    'host, path and other parameters stay',
  );
  t.equal(printed.upstream.api_key, '***');
  t.equal(printed.store.redis.url, 'redis://***@redis.test:6379/0');
  t.equal(printed.listen.admin.token, '***');

  const plain = await runCli(['config', 'check'], { UPSTREAM_URL: 'https://origin.test/v2?region=inland' });
  t.equal(plain.code, 1, 'a URL without a key still needs upstream.api_key');
  const unset = await runCli(['config', 'check']);
  t.equal(unset.code, 0, unset.stderr);
  t.match(
    JSON.parse(unset.stdout),
    { upstream: { url: '', api_key: '' }, listen: { admin: { token: '' } } },
    'empty stays empty',
  );
});

t.test(
  "config check masks the billing exporters' URLs, and the admin API masks the webhook endpoints' URLs",
  async (t) => {
    const exporters = [
      {
        type: 'stripe',
        event_name: 'x',
        api_base: 'https://stripe-user:stripe-pass@api.stripe.test/?access_token=stripe-token&mode=live',
      },
      {
        type: 'cloudevents',
        url: 'https://ce-user:ce-p@ss@ingest.example/v1/events?token=ce-token&Sig=ce-sig&region=x',
        source: 'gw',
      },
    ];
    const r = await runCli(['config', 'check', '--config', privateConfig({ billing: { exporters } })], {
      STRIPE_API_KEY: 'rk_test_mask_0123456789',
    });
    t.equal(r.code, 0, r.stderr);
    for (const secret of [
      'stripe-user',
      'stripe-pass',
      'stripe-token',
      'ce-user',
      'ce-p',
      'ss@ingest',
      'ce-token',
      'ce-sig',
    ])
      t.notOk(r.stdout.includes(secret), `${secret} is not printed`);
    t.notMatch(r.stdout, /[a-z]:[a-z-]+@/, 'no user:password@ at all');
    const printed = JSON.parse(r.stdout) as { billing: { exporters: Array<{ api_base?: string; url?: string }> } };
    t.equal(printed.billing.exporters[0]?.api_base, 'https://***@api.stripe.test/?access_token=***&mode=live');
    t.equal(printed.billing.exporters[1]?.url, 'https://***@ingest.example/v1/events?token=***&Sig=***&region=x');

    const gw = await startGateway(t, { webhooks: { allow_private_addresses: true, allow_http: true } });
    const url = 'http://127.0.0.1:9/hook?api_token=hook-token&x=1';
    const created = await adminCall(gw, 'POST', '/admin/webhooks', { url, events: ['prices.published'] });
    t.equal(created.status, 201, String(created.body?.message ?? ''));
    const masked = 'http://127.0.0.1:9/hook?api_token=***&x=1';
    t.equal(created.body.url, masked, 'the answer to the creation');
    const listed = await adminCall(gw, 'GET', '/admin/webhooks');
    t.notOk(JSON.stringify(listed.body).includes('hook-token'), 'the listing');
    t.equal(listed.body.webhooks?.[0]?.url, masked);
  },
);

t.test('config reference masks a credential written into the defaults', async (t) => {
  const defaults = [
    'listen: { admin: { token: "admin-default-token" } }',
    'store: { redis: { url: "redis://ref-user:ref-pass@redis.test:6379" } }',
    'upstream: { url: "https://origin.test/?api_key=ref-key", api_key: "ref-service-key" }',
  ].join('\n');
  const reference = configReference(defaults);
  for (const secret of ['admin-default-token', 'ref-user', 'ref-pass', 'ref-key', 'ref-service-key'])
    t.notOk(reference.includes(secret), `${secret} is not in the reference`);
  t.match(reference, '`"redis://***@redis.test:6379"`');
});
