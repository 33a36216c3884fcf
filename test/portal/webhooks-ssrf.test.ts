import { join } from 'node:path';
import t, { type Test } from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startGateway } from '../helpers/gateway.js';
import { type Person, signIn } from '../helpers/portal.js';
import { startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { startSmtp } from '../helpers/smtp.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

const smtp = await startSmtp(t);
const redis = await startRedis(t);
let seq = 0;
const address = (): string => `hookssrf${++seq}@example.test`;
const FAST = { allow_http: true, retry_delays_ms: [100], poll_interval_ms: 50, timeout_ms: 1000 };
/** The operator lets its own webhooks reach internal receivers; `portal` says whether customers' may. */
const settings = (portal: boolean, store: Record<string, unknown> = {}) => ({
  portal: { smtp: { url: smtp.url }, webhooks: { allow_private_addresses: portal } },
  webhooks: { ...FAST, allow_private_addresses: true },
  limits: { invalid_key_throttle: { max_attempts: 1000 } },
  log: { access: false },
  demo_accounts: false,
  store,
});
const PORTAL_SETTING = '(portal.webhooks.allow_private_addresses)';

interface Attempt {
  status: number | null;
  body: string;
  error: string | null;
}
const attempts = async (p: Person, id: string): Promise<Attempt[]> => {
  const r = await p.call('GET', `/portal/api/webhooks/${id}/deliveries`);
  const { deliveries } = (await r.json()) as { deliveries: Array<{ attempts: Attempt[] }> };
  return deliveries[0]?.attempts ?? [];
};

t.test(
  "webhooks.allow_private_addresses lets the operator's endpoint reach loopback, never a portal one",
  async (t) => {
    const gw = await startGateway(t, settings(false));
    const p = await signIn(gw, smtp, address());
    const receiver = await startReceiver(t);
    for (const url of [receiver.url, 'https://169.254.169.254/latest/meta-data', 'https://10.0.0.1/h']) {
      const host = new URL(url).hostname;
      const r = await p.call('POST', '/portal/api/webhooks', { url, events: ['key.created'] });
      t.equal(r.status, 400, url);
      t.same(
        await r.json(),
        {
          success: false,
          message: `url: ${host} resolves to ${host}, a loopback, private, link-local or metadata address ${PORTAL_SETTING}`,
        },
        `${url}: the admin API's refusal, naming the portal's setting`,
      );
    }
    const form = await gw.get('/portal/api/webhooks', {
      method: 'POST',
      headers: { cookie: p.cookie, origin: gw.base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ url: receiver.url, 'event:key.created': 'on', csrf_token: p.csrf }).toString(),
    });
    t.equal(form.status, 400, 'the page form too');
    t.match(await form.text(), 'portal.webhooks.allow_private_addresses');
    const listed = (await (await p.call('GET', '/portal/api/webhooks')).json()) as { webhooks: unknown[] };
    t.same(listed.webhooks, [], 'none was stored');

    const operator = await adminCall(gw, 'POST', '/admin/webhooks', {
      url: receiver.url,
      events: ['key.created'],
      account_id: p.account,
    });
    t.equal(operator.status, 201, "the operator's own endpoint on loopback, as before");
    t.equal(operator.body.created_via, 'operator');
    t.equal((await adminCall(gw, 'POST', `/admin/webhooks/${operator.body.id}/test`)).status, 202);
    await waitFor("the operator's test event at the receiver", () => receiver.got.length === 1, 5000);
  },
);

t.test('portal.webhooks.allow_private_addresses alone lets a portal endpoint reach loopback', async (t) => {
  const gw = await startGateway(t, {
    ...settings(true),
    webhooks: { ...FAST, allow_private_addresses: false },
  });
  const p = await signIn(gw, smtp, address());
  const receiver = await startReceiver(t);
  receiver.mode = { status: 200, body: 'internal answer' };
  const r = await p.call('POST', '/portal/api/webhooks', { url: receiver.url, events: ['key.created'] });
  t.equal(r.status, 201);
  const { endpoint } = (await r.json()) as { endpoint: { id: string } };
  const admin = await adminCall(gw, 'GET', '/admin/webhooks');
  t.match(admin.body.webhooks, [{ id: endpoint.id, created_via: 'portal' }], 'the admin API shows who made it');
  t.equal((await p.call('POST', `/portal/api/webhooks/${endpoint.id}/test`)).status, 202);
  await waitFor('the test event at the receiver', () => receiver.got.length === 1, 5000);
  await waitFor('the attempt in the log', async () => (await attempts(p, endpoint.id)).length === 1);
  t.match(await attempts(p, endpoint.id), [{ status: 200, body: 'internal answer', error: null }]);
});

/**
 * A portal endpoint made while its host was allowed (here: the portal's setting was on, then
 * turned off, as a name's answer may change to a private address after the check), then
 * delivered by a gateway that refuses it: nothing is sent, and the log holds no answer.
 */
async function refusedAtDelivery(t: Test, store: Record<string, unknown>): Promise<void> {
  const email = address();
  const receiver = await startReceiver(t);
  receiver.mode = { status: 200, body: 'an internal service answer' };
  const url = `http://localhost:${receiver.port}/customer`;
  const before = await startGateway(t, settings(true, store));
  const made = await (await signIn(before, smtp, email)).call('POST', '/portal/api/webhooks', {
    url,
    events: ['key.created'],
  });
  t.equal(made.status, 201, 'made while allowed');
  const { endpoint } = (await made.json()) as { endpoint: { id: string } };
  await before.app.close();

  const gw = await startGateway(t, settings(false, store));
  const p = await signIn(gw, smtp, email, 2);
  t.equal((await p.call('POST', `/portal/api/webhooks/${endpoint.id}/test`)).status, 202);
  // At least one: a refused attempt is retried after retry_delays_ms (100 ms), and at load 14
  // the wait's polls missed the 100 ms in which the log held exactly one. Every attempt is refused.
  await waitFor('the attempt in the log', async () => (await attempts(p, endpoint.id)).length >= 1);
  for (const attempt of await attempts(p, endpoint.id)) {
    t.equal(attempt.status, null, 'no answer');
    t.equal(attempt.body, '', 'no answer body in the log');
    t.match(
      attempt.error,
      /^refused: localhost resolves to \S+, a loopback, private, link-local or metadata address \(portal\.webhooks\.allow_private_addresses\)$/,
    );
  }
  // The operator's endpoint to the same name on the same gateway is delivered: its rule is the operator's.
  const operator = await adminCall(gw, 'POST', '/admin/webhooks', { url: receiver.url, events: ['key.created'] });
  t.equal((await adminCall(gw, 'POST', `/admin/webhooks/${operator.body.id}/test`)).status, 202);
  await waitFor("the operator's test event at the receiver", () => receiver.got.length === 1, 5000);
  t.same(
    receiver.got.map((g) => g.event.type),
    ['webhook.test'],
    'the portal endpoint got nothing',
  );
  t.same(
    receiver.got.map((g) => g.path),
    ['/hook'],
    "the one request is the operator's, none at the portal endpoint's /customer",
  );
}

t.test('memory: a portal endpoint resolving to a private address at delivery is not sent to', (t) =>
  refusedAtDelivery(t, { memory: { file: join(tempDir('fpg-hookssrf-'), 'store.json') } }),
);

t.test('redis: a portal endpoint resolving to a private address at delivery is not sent to', (t) =>
  refusedAtDelivery(t, { type: 'redis', redis: { url: redis.url, key_prefix: `hookssrf${process.pid}:` } }),
);
