import { createConfig, lintFromString } from '@redocly/openapi-core';
import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startGateway } from '../helpers/gateway.js';
import { type Person, signIn } from '../helpers/portal.js';
import { startReceiver } from '../helpers/receiver.js';
import { startSmtp } from '../helpers/smtp.js';
import { waitFor } from '../helpers/wait.js';

const smtp = await startSmtp(t);
const settings = {
  portal: { smtp: { url: smtp.url } },
  limits: { invalid_key_throttle: { max_attempts: 1000 } },
  log: { access: false },
};
// The receivers are on loopback: the portal's own setting lets its endpoints reach them.
const gw = await startGateway(t, {
  ...settings,
  portal: { ...settings.portal, webhooks: { allow_private_addresses: true } },
  webhooks: { allow_http: true, retry_delays_ms: [100], poll_interval_ms: 50 },
});
const FORM = 'application/x-www-form-urlencoded';
let seq = 0;
const address = (): string => `hookpage${++seq}@example.test`;
const status = async (r: Promise<Response>): Promise<number> => {
  const res = await r;
  await res.arrayBuffer();
  return res.status;
};
/** A form post of the page, as a browser sends it from `origin`. */
const post = (p: Person, path: string, fields: Record<string, string>, origin = gw.base) =>
  gw.get(path, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: p.cookie, origin, 'content-type': FORM },
    body: new URLSearchParams(fields).toString(),
  });
const page = async (p: Person): Promise<string> =>
  (await gw.get('/portal/webhooks', { headers: { cookie: p.cookie } })).text();
const listed = async (p: Person) =>
  ((await (await p.call('GET', '/portal/api/webhooks')).json()) as { webhooks: Array<{ id: string }> }).webhooks;

t.test('without script: add an endpoint (the secret shown once), test it, replay, delete', async (t) => {
  const p = await signIn(gw, smtp, address());
  const receiver = await startReceiver(t);
  const created = await post(p, '/portal/api/webhooks', {
    url: receiver.url,
    'event:key.created': 'on',
    csrf_token: p.csrf,
  });
  t.equal(created.status, 201);
  t.match(await created.text(), /<code>whsec_[A-Za-z0-9+/=]+<\/code>/, 'the secret, once');
  const [hook] = await listed(p);
  const id = hook?.id as string;
  t.match(await page(p), `<code>${receiver.url}</code>`, 'listed on the page, without its secret');
  const tested = await post(p, `/portal/api/webhooks/${id}/test`, { csrf_token: p.csrf });
  t.equal(tested.status, 303);
  t.equal(tested.headers.get('location'), '/portal/webhooks');
  await waitFor('the test event', () => receiver.got.length === 1, 5000);
  const eventId = receiver.got[0]?.headers['webhook-id'] as string;
  await waitFor('the attempt on the page', async () => (await page(p)).includes('<td>204</td>'));
  const replay = `/portal/api/webhooks/${id}/deliveries/${eventId}/replay`;
  t.match(await page(p), `action="${replay}"`, 'a replay button per delivery');
  t.equal(await status(post(p, replay, { csrf_token: p.csrf })), 303);
  await waitFor('the replay', () => receiver.got.length === 2, 5000);
  t.equal(await status(post(p, `/portal/api/webhooks/${id}/delete`, { csrf_token: p.csrf })), 303);
  t.same(await listed(p), [], 'deleted');
  const bad = await post(p, '/portal/api/webhooks', { url: 'not <a> url', csrf_token: p.csrf });
  t.equal(bad.status, 400);
  const said = await bad.text();
  t.match(said, /Endpoint not added/);
  t.match(said, /events: expected at least one event type/, 'every problem named');
});

t.test("HTML in a receiver's answer, a URL and a description is escaped on the page", async (t) => {
  const p = await signIn(gw, smtp, address());
  const receiver = await startReceiver(t);
  receiver.mode = { status: 200, body: '<script>alert(1)</script><img src=x onerror=alert(2)>' };
  const url = `${receiver.url}/it's`;
  const made = await p.call('POST', '/portal/api/webhooks', {
    url,
    events: ['key.created'],
    description: '<b onclick=alert(3)>erp</b>',
  });
  const { endpoint } = (await made.json()) as { endpoint: { id: string } };
  await p.call('POST', `/portal/api/webhooks/${endpoint.id}/test`);
  await waitFor('the answer on the page', async () => (await page(p)).includes('alert(1)'));
  const shown = await page(p);
  t.match(shown, '&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;');
  const ours = '<script src="/portal/portal.js" defer></script>';
  t.notMatch(shown.replace(ours, ''), /<script|<img|<b /, "no markup of theirs: only the portal's own script");
  t.match(shown, '&lt;b onclick=alert(3)&gt;erp&lt;/b&gt;');
  t.match(shown, 'it&#39;s');
  t.notMatch(shown, "it's");
  const headers = (await gw.get('/portal/webhooks', { headers: { cookie: p.cookie } })).headers;
  t.match(headers.get('content-security-policy'), /script-src 'self'.*frame-ancestors 'none'/);
});

t.test('a cross-site post, or one without the CSRF token, is 403 and adds nothing', async (t) => {
  const p = await signIn(gw, smtp, address());
  const receiver = await startReceiver(t);
  const fields = { url: receiver.url, 'event:key.created': 'on' };
  t.equal(
    await status(post(p, '/portal/api/webhooks', { ...fields, csrf_token: p.csrf }, 'https://evil.example')),
    403,
  );
  t.equal(await status(post(p, '/portal/api/webhooks', fields)), 403, 'no token');
  const json = await gw.get('/portal/api/webhooks', {
    method: 'POST',
    headers: { cookie: p.cookie, origin: gw.base, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url, events: ['key.created'] }),
  });
  t.equal(json.status, 403, 'JSON without X-CSRF-Token');
  t.same(await listed(p), []);
  t.equal(await status(gw.get('/portal/api/webhooks')), 401, 'no session');
  const signedOut = await gw.get('/portal/webhooks', { redirect: 'manual' });
  t.equal(signedOut.status, 303, 'the page sends a stranger to sign in');
  t.equal(signedOut.headers.get('location'), '/portal/');
});

t.test('owners and developers both manage webhooks; for their own events only, ten at most', async (t) => {
  const owner = await signIn(gw, smtp, address());
  const devEmail = address();
  t.equal(await status(owner.call('POST', '/portal/api/members', { email: devEmail, role: 'developer' })), 201);
  const dev = await signIn(gw, smtp, devEmail);
  const receiver = await startReceiver(t);
  const add = (p: Person, events: string[]) => p.call('POST', '/portal/api/webhooks', { url: receiver.url, events });
  t.equal(await status(add(dev, ['key.created'])), 201, 'a developer adds one');
  const [made] = await listed(owner);
  t.equal(await status(owner.call('POST', `/portal/api/webhooks/${made?.id}/test`)), 202, 'the owner sees it');
  t.equal(await status(add(owner, ['prices.published'])), 400, "price events are not the account's own");
  t.equal(await status(add(owner, ['webhook.test'])), 400);
  for (let i = 1; i < 10; i++) t.equal(await status(add(owner, ['usage.threshold'])), 201);
  const eleventh = await add(dev, ['usage.threshold']);
  t.equal(eleventh.status, 409);
  t.match(await eleventh.json(), { message: /at most 10/ });
});

t.test("a URL the SSRF rules refuse gets the admin API's own words, naming the portal's setting", async (t) => {
  const strict = await startGateway(t, settings);
  const p = await signIn(strict, smtp, address());
  for (const url of ['https://127.0.0.1/h', 'https://169.254.169.254/latest', 'http://93.184.216.34/h']) {
    const portal = await p.call('POST', '/portal/api/webhooks', { url, events: ['key.created'] });
    t.equal(portal.status, 400, url);
    const admin = await adminCall(strict, 'POST', '/admin/webhooks', { url, events: ['key.created'] });
    t.equal(admin.status, 400);
    const words = (admin.body.message as string).replace(
      '(webhooks.allow_private_addresses)',
      '(portal.webhooks.allow_private_addresses)',
    );
    t.equal(((await portal.json()) as { message: string }).message, words, words);
  }
  t.same(await listed(p), []);
});

t.test('the webhook routes are in /portal/openapi.json, which lints clean', async (t) => {
  const doc = (await (await gw.get('/portal/openapi.json')).json()) as { paths: Record<string, unknown> };
  for (const path of [
    '/webhooks',
    '/webhooks/{id}',
    '/webhooks/{id}/test',
    '/webhooks/{id}/deliveries',
    '/webhooks/{id}/deliveries/{delivery_id}/replay',
  ])
    t.ok(doc.paths[path], path);
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
  t.same(
    problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} ${p.message}`),
    [],
  );
});
