/**
 * Attacks on the key features from outside (issue 30's review): each test is a defect found by
 * driving a running gateway, named by the behaviour it proves.
 */
import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import type { TestContext } from '../helpers/context.js';
import { startGateway } from '../helpers/gateway.js';

async function setUp(t: TestContext) {
  const gw = await startGateway(t);
  const created = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  return { gw, id: created.body.account.id as string };
}

t.test('an allowlist address in octal, hex or short form is refused, not read as another network', async (t) => {
  const { gw, id } = await setUp(t);
  // ipaddr.js reads 010.0.0.1 as 8.0.0.1 and 1.2.3 as 1.2.0.3: an operator would pin a key to
  // an address they never typed.
  for (const cidr of ['010.0.0.1/32', '10.0.0.010', '1.2.3/32', '0x0a.0.0.1', '167772161', 'fe80::1%eth0']) {
    const bad = await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, { name: 'n', allowed_cidrs: [cidr] });
    t.equal(bad.status, 400, cidr);
    t.match(bad.body.problems, [/^allowed_cidrs\.0: /], `${cidr}: the field is named`);
  }
  t.equal((await adminCall(gw, 'GET', `/admin/accounts/${id}/keys`)).body.keys.length, 1, 'nothing was added');
  const good = await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, {
    name: 'n',
    allowed_cidrs: ['10.0.0.1', '192.0.2.0/24', '2001:db8::/48', '::ffff:198.51.100.0/120'],
  });
  t.equal(good.status, 201);
  t.same(good.body.key.allowed_cidrs, ['10.0.0.1/32', '192.0.2.0/24', '2001:db8::/48', '198.51.100.0/24']);
});

t.test('a key cannot be created already expired: 400 naming expires_at, and nothing is added', async (t) => {
  const { gw, id } = await setUp(t);
  const past = new Date(Date.now() - 60_000).toISOString();
  const bad = await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, { name: 'contractor', expires_at: past });
  t.equal(bad.status, 400);
  t.match(bad.body.problems, [/^expires_at: /]);
  t.equal((await adminCall(gw, 'GET', `/admin/accounts/${id}/keys`)).body.keys.length, 1, 'nothing was added');
  const future = new Date(Date.now() + 3_600_000).toISOString();
  t.equal((await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, { name: 'c', expires_at: future })).status, 201);
});

t.test("deleting an account's last key that still works is a 409, even beside expired keys", async (t) => {
  const { gw, id } = await setUp(t);
  const keys = async () => (await adminCall(gw, 'GET', `/admin/accounts/${id}/keys`)).body.keys;
  const [first] = await keys();
  const other = await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, { name: 'contractor' });
  const past = new Date(Date.now() - 1000).toISOString();
  t.equal(
    (await adminCall(gw, 'PATCH', `/admin/accounts/${id}/keys/${other.body.key.id}`, { expires_at: past })).status,
    200,
  );
  const refused = await adminCall(gw, 'DELETE', `/admin/accounts/${id}/keys/${first.id}`);
  t.equal(refused.status, 409, 'the account would be left with no key that works');
  t.equal((await keys()).length, 2, 'nothing was deleted');
  t.equal(
    (await adminCall(gw, 'DELETE', `/admin/accounts/${id}/keys/${other.body.key.id}`)).status,
    204,
    'an expired key may go',
  );
});
