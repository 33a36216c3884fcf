import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import type { TestContext } from '../helpers/context.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { used } from '../helpers/usage.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const HOUR = 3_600_000;

async function setUp(t: TestContext) {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, {}, { clock });
  const created = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  const id = created.body.account.id as string;
  return { gw, clock, id, key: created.body.api_key as string };
}

const get = async (gw: TestGateway, key: string, path = SIMPLE) => {
  const r = await gw.get(`${path}?api_key=${key}`);
  return { status: r.status, body: (await r.json()) as Record<string, unknown>, headers: r.headers };
};

t.test('an account starts with its default key; keys are added, listed, renamed and shown once', async (t) => {
  const { gw, id, key } = await setUp(t);
  const shown = await adminCall(gw, 'GET', `/admin/accounts/${id}`);
  t.same(shown.body.keys, [
    {
      id: shown.body.keys[0].id,
      name: 'default',
      created_at: new Date(NOW).toISOString(),
      expires_at: null,
      expired: false,
      scopes: ['prices', 'history', 'usage', 'passthrough'],
      allowed_cidrs: [],
      last_used_on: null,
      hint: key.slice(-4),
    },
  ]);
  t.match(shown.body.keys[0].id, /^key_[0-9a-f]{16}$/);
  t.notMatch(JSON.stringify(shown.body), /key_hash/, 'never a hash');

  const added = await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, {
    name: 'BI dashboard',
    scopes: ['history', 'prices', 'history'],
    allowed_cidrs: ['203.0.113.7', '2001:db8::/32', '::ffff:198.51.100.0/120'],
    expires_at: '2027-01-01T00:00:00+02:00',
  });
  t.equal(added.status, 201);
  t.match(added.body.api_key, /^fpg_[A-Za-z0-9_-]{38}$/);
  t.same(Object.keys(added.body), ['key', 'api_key']);
  t.match(added.body.key, {
    name: 'BI dashboard',
    scopes: ['prices', 'history'],
    allowed_cidrs: ['203.0.113.7/32', '2001:db8::/32', '198.51.100.0/24'],
    expires_at: '2026-12-31T22:00:00.000Z',
    hint: (added.body.api_key as string).slice(-4),
  });

  t.equal((await get(gw, key)).status, 200, 'the first key still works');
  const listed = await adminCall(gw, 'GET', `/admin/accounts/${id}/keys`);
  t.same(
    listed.body.keys.map((k: { name: string }) => k.name),
    ['default', 'BI dashboard'],
  );
  t.equal(listed.body.keys[0].last_used_on, '2026-11-23', 'the day it last admitted a request');

  const renamed = await adminCall(gw, 'PATCH', `/admin/accounts/${id}/keys/${added.body.key.id}`, { name: 'BI' });
  t.equal(renamed.status, 200);
  t.equal(renamed.body.key.name, 'BI');
  t.same(renamed.body.key.scopes, ['prices', 'history'], 'what the patch does not name stays');
});

t.test('bad key input is a 400 naming each field, and changes nothing', async (t) => {
  const { gw, id } = await setUp(t);
  const bad = await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, {
    name: 'x'.repeat(65),
    scopes: ['prices', 'everything'],
    allowed_cidrs: ['10.0.0.0/33', 'not an address'],
    expires_at: 'tomorrow',
    colour: 'red',
  });
  t.equal(bad.status, 400);
  const problems = (bad.body.problems as string[]).join('\n');
  for (const field of ['name', 'scopes', 'allowed_cidrs', 'expires_at', 'colour']) t.match(problems, field);
  const many = Array.from({ length: 51 }, (_, i) => `10.0.${i}.0/24`);
  t.equal((await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, { name: 'n', allowed_cidrs: many })).status, 400);
  t.equal((await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, { name: 'n', scopes: [] })).status, 400);
  t.equal((await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, { name: '' })).status, 400);
  const keyId = (await adminCall(gw, 'GET', `/admin/accounts/${id}/keys`)).body.keys[0].id;
  t.equal((await adminCall(gw, 'PATCH', `/admin/accounts/${id}/keys/${keyId}`, {})).status, 400);
  for (const grace_s of [-1, 2_592_001, 1.5, '60'])
    t.equal(
      (await adminCall(gw, 'POST', `/admin/accounts/${id}/keys/${keyId}/rotate`, { grace_s })).status,
      400,
      `grace_s ${JSON.stringify(grace_s)}`,
    );
  t.equal((await adminCall(gw, 'GET', `/admin/accounts/${id}/keys`)).body.keys.length, 1, 'nothing was added');
  t.equal((await adminCall(gw, 'GET', '/admin/accounts/acct_none/keys')).status, 404);
  t.equal((await adminCall(gw, 'PATCH', `/admin/accounts/${id}/keys/key_0000000000000000`, { name: 'a' })).status, 404);
});

t.test('rotation with a grace: both keys work until the grace ends, then the old one gets 401 expired', async (t) => {
  const { gw, clock, id, key } = await setUp(t);
  const keyId = (await adminCall(gw, 'GET', `/admin/accounts/${id}/keys`)).body.keys[0].id;
  await adminCall(gw, 'PATCH', `/admin/accounts/${id}/keys/${keyId}`, { scopes: ['prices', 'usage'] });
  const rotated = await adminCall(gw, 'POST', `/admin/accounts/${id}/keys/${keyId}/rotate`, { grace_s: 3600 });
  t.equal(rotated.status, 201);
  t.same(Object.keys(rotated.body), ['key', 'api_key', 'previous']);
  t.match(rotated.body.key, { name: 'default', scopes: ['prices', 'usage'], expires_at: null });
  t.not(rotated.body.key.id, keyId);
  t.match(rotated.body.previous, { id: keyId, expires_at: new Date(NOW + HOUR).toISOString(), expired: false });
  const fresh = rotated.body.api_key as string;
  t.equal((await get(gw, key)).status, 200, 'the old key works during the grace');
  t.equal((await get(gw, fresh)).status, 200, 'and so does the new one');
  const before = await used(gw, fresh);
  clock.ms = NOW + HOUR;
  const late = await get(gw, key);
  t.equal(late.status, 401, 'at the end of the grace the old key is refused');
  t.same(late.body, { success: false, message: 'API key has expired.' });
  t.equal(await used(gw, fresh), before, 'and the refusal was not counted');
  t.equal((await get(gw, fresh)).status, 200);
  const listed = await adminCall(gw, 'GET', `/admin/accounts/${id}/keys`);
  t.match(listed.body.keys[0], { id: keyId, expired: true }, 'shown as expired until deleted');
  const logs = gw.logs();
  t.match(logs, new RegExp(`"action":"key.rotate","from":"[^"]+","account_id":"${id}"|"account_id":"${id}"`));
  t.match(logs, new RegExp(`"previous_key_id":"${keyId}"`), 'the audit line names both keys');
  t.match(logs, /"grace_s":3600/, 'and the grace');
});

t.test(
  'rotate-key keeps its meaning for one key, takes grace_s, and answers 409 for several or a rotation made',
  async (t) => {
    const { gw, clock, id, key } = await setUp(t);
    const once = await adminCall(gw, 'POST', `/admin/accounts/${id}/rotate-key`);
    t.equal(once.status, 200);
    t.same(Object.keys(once.body).slice(0, 2), ['account', 'api_key']);
    t.equal((await get(gw, key)).status, 401, 'without a grace the old key stops at once');
    const second = once.body.api_key as string;
    const graced = await adminCall(gw, 'POST', `/admin/accounts/${id}/rotate-key`, { grace_s: 60 });
    t.equal(graced.status, 200, 'an expired key does not count: the account has one key that works');
    t.equal((await get(gw, second)).status, 200, 'the old key works for its grace');
    const again = await adminCall(gw, 'POST', `/admin/accounts/${id}/rotate-key`);
    t.equal(again.status, 409, 'while the old key is in its grace, the rotation is made already');
    t.equal(again.body.successor_key_id, graced.body.key.id);
    t.match(again.body.message, `/admin/accounts/${id}/keys/${graced.body.key.id}/rotate`);
    const other = await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, { name: 'other' });
    const several = await adminCall(gw, 'POST', `/admin/accounts/${id}/rotate-key`);
    t.equal(several.status, 409);
    t.match(several.body.message, `/admin/accounts/${id}/keys/KEY_ID/rotate`);
    await adminCall(gw, 'DELETE', `/admin/accounts/${id}/keys/${other.body.key.id}`);
    clock.ms = NOW + 61_000;
    t.equal((await get(gw, second)).status, 401);
    t.equal((await adminCall(gw, 'POST', `/admin/accounts/${id}/rotate-key`)).status, 200, 'one key again');
  },
);

t.test('delete: 204, the key stops at once, and the last key of an account is kept (409)', async (t) => {
  const { gw, id, key } = await setUp(t);
  const first = (await adminCall(gw, 'GET', `/admin/accounts/${id}/keys`)).body.keys[0].id;
  const added = await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, { name: 'erp' });
  t.equal((await get(gw, key)).status, 200);
  const deleted = await adminCall(gw, 'DELETE', `/admin/accounts/${id}/keys/${first}`);
  t.equal(deleted.status, 204);
  t.equal(deleted.body, '', 'no body');
  const refused = await get(gw, key);
  t.equal(refused.status, 401);
  t.same(refused.body, { success: false, message: 'Invalid API key.' });
  t.equal((await adminCall(gw, 'DELETE', `/admin/accounts/${id}/keys/${added.body.key.id}`)).status, 409);
  t.equal((await get(gw, added.body.api_key)).status, 200, 'the last key goes on working');
  t.equal((await adminCall(gw, 'DELETE', `/admin/accounts/${id}/keys/${first}`)).status, 404);
});

t.test('an account has at most 20 keys that have not expired', async (t) => {
  const { gw, id } = await setUp(t);
  for (let i = 1; i < 20; i++)
    t.equal((await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, { name: `k${i}` })).status, 201);
  const over = await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, { name: 'k20' });
  t.equal(over.status, 409);
  t.match(over.body.message, /20 keys/);
});
