import { createHash } from 'node:crypto';
import t from 'tap';
import { merge } from '../../src/config/load.js';
import { adminCall } from '../helpers/admin.js';
import type { TestContext } from '../helpers/context.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { githubSigner, match, postReport, SECRET_SCANNING } from '../helpers/secret-scanning.js';
import { scaled, waitFor } from '../helpers/wait.js';

const S = '/fuel-api/api/simple-current.php';
const WEBHOOKS = { allow_private_addresses: true, allow_http: true, retry_delays_ms: [100], poll_interval_ms: 50 };
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const priceStatus = async (gw: TestGateway, key: string): Promise<number> =>
  (await gw.get(S, { headers: { 'X-API-Key': key } })).status;

async function setup(t: TestContext, settings: Record<string, unknown> = {}) {
  const github = githubSigner();
  const gw = await startGateway(
    t,
    merge({ demo_accounts: false, webhooks: WEBHOOKS, secret_scanning: { public_keys: [github.publicKey] } }, settings),
  );
  const { body: created } = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter', label: 'fleet' });
  const account = created.account.id as string;
  const { body: second } = await adminCall(gw, 'POST', `/admin/accounts/${account}/keys`, { name: 'erp' });
  return {
    github,
    gw,
    account,
    defaultKey: created.api_key as string,
    erp: second as { key: { id: string }; api_key: string },
  };
}

/** An endpoint for the account, one for nobody in particular, and one of another account. */
async function receivers(t: TestContext, gw: TestGateway, account: string) {
  const events = ['key.leaked', 'key.revoked'];
  const { body: other } = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  const [own, operator, stranger] = await Promise.all([startReceiver(t), startReceiver(t), startReceiver(t)]);
  await adminCall(gw, 'POST', '/admin/webhooks', { url: own.url, events, account_id: account });
  await adminCall(gw, 'POST', '/admin/webhooks', { url: operator.url, events });
  await adminCall(gw, 'POST', '/admin/webhooks', { url: stranger.url, events, account_id: other.account.id });
  return { own, operator, stranger };
}

t.test(
  'a signed report revokes the live key at once, labels every token, audits it and tells key.leaked',
  async (t) => {
    const { github, gw, account, defaultKey, erp } = await setup(t);
    const { own, operator, stranger } = await receivers(t, gw, account);
    t.equal(await priceStatus(gw, erp.api_key), 200, 'the key works before the report');
    const unknown = `fpg_${'C'.repeat(38)}`;
    const url = 'https://github.com/example/erp-sync/blob/4d1e0c/config/.env';
    const report = [match(erp.api_key, url), match('not-a-key-at-all'), match(unknown)];
    const body = JSON.stringify(report);
    const r = await postReport(gw, body, github.headers(body));
    t.equal(r.status, 200);
    t.equal(r.headers.get('content-type'), 'application/json');
    t.same(r.json, [
      { token_hash: sha256(erp.api_key), token_type: 'fuel_gateway_api_key', label: 'true_positive' },
      { token_hash: sha256('not-a-key-at-all'), token_type: 'fuel_gateway_api_key', label: 'false_positive' },
      { token_hash: sha256(unknown), token_type: 'fuel_gateway_api_key', label: 'false_positive' },
    ]);
    t.equal(await priceStatus(gw, erp.api_key), 401, 'the leaked key no longer works');
    t.equal(await priceStatus(gw, defaultKey), 200, "the account's other key still does");
    const { body: listed } = await adminCall(gw, 'GET', `/admin/accounts/${account}/keys`);
    t.notOk(
      (listed.keys as Array<{ id: string }>).some((k) => k.id === erp.key.id),
      'the key is gone from the list',
    );
    const audit = gw
      .logs()
      .split('\n')
      .filter((l) => l.includes('"admin key.leak"'))
      .map((l) => JSON.parse(l).audit);
    t.match(audit, [{ action: 'key.leak', account_id: account, key_id: erp.key.id, url, source: 'content' }]);
    t.notOk(gw.logs().includes(erp.api_key), 'the key is in no log line');

    await waitFor(
      'key.leaked and key.revoked at both endpoints',
      () => own.got.length >= 2 && operator.got.length >= 2,
    );
    for (const receiver of [own, operator]) {
      const leaked = receiver.got.find((g) => g.event.type === 'key.leaked');
      t.same(leaked?.event.data, {
        account_id: account,
        key_id: erp.key.id,
        key_name: 'erp',
        url,
        source: 'content',
        action: 'revoke',
      });
      t.same(receiver.got.find((g) => g.event.type === 'key.revoked')?.event.data, {
        account_id: account,
        key_id: erp.key.id,
        key_name: 'erp',
      });
    }

    // The same report again (GitHub retries): the key is gone, so nothing more happens.
    const again = await postReport(gw, body, github.headers(body));
    t.equal((again.json as Array<{ label: string }>)[0]?.label, 'false_positive', 'a revoked key is no longer live');
    const marker = await adminCall(gw, 'POST', `/admin/accounts/${account}/keys`, { name: 'marker' });
    await adminCall(gw, 'DELETE', `/admin/accounts/${account}/keys/${marker.body.key.id}`);
    await waitFor('the marker revocation', () => own.got.some((g) => g.event.data['key_id'] === marker.body.key.id));
    t.equal(own.got.filter((g) => g.event.type === 'key.leaked').length, 1, 'key.leaked once');
    t.equal(stranger.got.length, 0, "another account's endpoint hears nothing");
  },
);

t.test('a forged report changes nothing, and forgers are throttled like key scanners', async (t) => {
  const { github, gw, account, erp } = await setup(t, { limits: { invalid_key_throttle: { max_attempts: 6 } } });
  const { own, operator } = await receivers(t, gw, account);
  const forger = githubSigner(github.publicKey.key_identifier);
  const body = JSON.stringify([match(erp.api_key)]);
  const signed = github.headers(body);
  const attempts: Array<[string, string, Record<string, string>]> = [
    ['signed by another key under the same identifier', body, forger.headers(body)],
    ['the body changed after signing', body.replace('content', 'commit'), signed],
    ['an identifier not configured', body, { ...signed, 'Github-Public-Key-Identifier': 'unknown' }],
    ['no signature', body, { 'Content-Type': 'application/json', 'Github-Public-Key-Identifier': 'test-github-key' }],
    ['no headers at all', body, { 'Content-Type': 'application/json' }],
  ];
  for (const [what, sent, headers] of attempts) {
    const r = await postReport(gw, sent, headers);
    t.equal(r.status, 401, what);
    t.same(r.json, { success: false, message: 'Invalid or missing report signature.' }, what);
    t.equal(r.headers.get('www-authenticate'), null, `${what}: no API-key challenge`);
  }
  t.equal(await priceStatus(gw, erp.api_key), 200, 'the key still works');
  t.notOk(gw.logs().includes('"admin key.leak"'), 'no audit line');
  // The sixth failure blocks the address: even a genuine report waits out the block.
  t.equal((await postReport(gw, body, forger.headers(body))).status, 401);
  const blocked = await postReport(gw, body, signed);
  t.equal(blocked.status, 429);
  t.ok(Number(blocked.headers.get('retry-after')) > 0, 'Retry-After');
  t.equal(await priceStatus(gw, erp.api_key), 200, 'the key still works after the throttled report');
  // Nothing was told: a webhook test event arrives alone.
  const { body: endpoints } = await adminCall(gw, 'GET', '/admin/webhooks');
  for (const ep of endpoints.webhooks as Array<{ id: string }>)
    await adminCall(gw, 'POST', `/admin/webhooks/${ep.id}/test`);
  await waitFor('the test events', () => own.got.length >= 1 && operator.got.length >= 1);
  t.same(
    [...own.got, ...operator.got].map((g) => g.event.type),
    ['webhook.test', 'webhook.test'],
  );
});

t.test('notify: a leaked key keeps working and is told with action notify', async (t) => {
  const { github, gw, account, erp } = await setup(t, {
    secret_scanning: { action: 'notify' },
  });
  const { own } = await receivers(t, gw, account);
  const body = JSON.stringify([match(erp.api_key)]);
  const r = await postReport(gw, body, github.headers(body));
  t.equal((r.json as Array<{ label: string }>)[0]?.label, 'true_positive');
  t.equal(await priceStatus(gw, erp.api_key), 200);
  await waitFor('key.leaked', () => own.got.length >= 1);
  t.match(own.got[0]?.event, { type: 'key.leaked', data: { key_id: erp.key.id, action: 'notify' } });
});

t.test("an account's last key cannot be deleted: a leak report expires it at once instead", async (t) => {
  const { github, gw, account, defaultKey, erp } = await setup(t);
  await adminCall(gw, 'DELETE', `/admin/accounts/${account}/keys/${erp.key.id}`);
  const body = JSON.stringify([match(defaultKey)]);
  const r = await postReport(gw, body, github.headers(body));
  t.equal((r.json as Array<{ label: string }>)[0]?.label, 'true_positive');
  const { body: listed } = await adminCall(gw, 'GET', `/admin/accounts/${account}/keys`);
  t.equal(listed.keys.length, 1, 'the key stays');
  t.ok(Date.parse(listed.keys[0].expires_at) <= Date.now(), 'expired');
  const refused = await gw.get(S, { headers: { 'X-API-Key': defaultKey } });
  t.equal(refused.status, 401);
  t.same(await refused.json(), { success: false, message: 'API key has expired.' });
});

t.test('reports out of bounds are refused with the error table, and only POST is taken', async (t) => {
  const { github, gw, erp } = await setup(t);
  const many = JSON.stringify(Array.from({ length: 1001 }, () => match(erp.api_key)));
  const tooMany = await postReport(gw, many, github.headers(many));
  t.equal(tooMany.status, 400);
  t.same(tooMany.json, { success: false, message: 'Too many tokens in one report (at most 1000).' });
  const huge = JSON.stringify([{ ...match(erp.api_key), url: 'x'.repeat(1024 * 1024) }]);
  const tooLarge = await postReport(gw, huge, github.headers(huge));
  t.equal(tooLarge.status, 413);
  t.same(tooLarge.json, { success: false, message: 'Report too large (at most 1 MiB).' });
  for (const bad of ['{"token":"x"}', 'not json', '[]', '[{"type":"t"}]']) {
    const r = await postReport(gw, bad, github.headers(bad));
    t.equal(r.status, 400, bad);
    t.match(r.json, { message: /^Invalid report/ }, bad);
  }
  t.equal(await priceStatus(gw, erp.api_key), 200, 'the key still works');
  const get = await gw.get(SECRET_SCANNING);
  t.equal(get.status, 405);
  t.equal(get.headers.get('allow'), 'POST');
  const off = await startGateway(t, { demo_accounts: false });
  const body = JSON.stringify([match(erp.api_key)]);
  t.equal((await postReport(off, body, github.headers(body))).status, 404, 'no public keys configured: 404');
});

t.test('on Redis, a leak report on one gateway stops the key on another within a second', async (t) => {
  const redis = await startRedis(t);
  const store = { store: redis.store };
  const { github, gw, erp } = await setup(t, store);
  const other = await startGateway(t, {
    demo_accounts: false,
    secret_scanning: { public_keys: [github.publicKey] },
    ...store,
  });
  t.equal(await priceStatus(other, erp.api_key), 200, 'the other gateway holds the key');
  const body = JSON.stringify([match(erp.api_key)]);
  const started = Date.now();
  t.equal((await postReport(gw, body, github.headers(body))).status, 200);
  const took = await waitFor(
    'the other gateway refuses the key',
    async () => (await priceStatus(other, erp.api_key)) === 401,
    1000,
  );
  t.ok(Date.now() - started < scaled(1000), `within a second (${took} ms after the answer)`);
});
