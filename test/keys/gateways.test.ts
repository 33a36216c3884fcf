/**
 * Key changes on one gateway take effect on another on the same Redis within a second, and a
 * stale copy never admits what the store would refuse: the second gateway holds each key warm
 * (cached) before the change.
 */
import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';

t.test('a revoke, a scope change and an allowlist reach a second gateway within a second', async (t) => {
  const redis = await startRedis(t);
  const settings = { store: redis.store, log: { access: false } };
  const one = await startGateway(t, settings);
  const two = await startGateway(t, settings);
  const created = await adminCall(one, 'POST', '/admin/accounts', { plan: 'starter' });
  const id = created.body.account.id as string;
  const first = created.body.api_key as string;
  const second = await adminCall(one, 'POST', `/admin/accounts/${id}/keys`, { name: 'telematics' });
  const status = async (gw: TestGateway, key: string): Promise<number> =>
    (await gw.get(`${SIMPLE}?api_key=${key}`)).status;
  t.equal(await status(two, first), 200, 'warm on the second gateway');
  t.equal(await status(two, second.body.api_key), 200);

  const revoked = await adminCall(one, 'DELETE', `/admin/accounts/${id}/keys/${second.body.key.id}`);
  t.equal(revoked.status, 204);
  const took = await waitFor(
    'the revoke on the second gateway',
    async () => (await status(two, second.body.api_key)) === 401,
    1000,
  );
  t.comment(`revoked on the second gateway after ${took} ms`);
  t.equal(await status(two, first), 200, "the account's other key goes on working");

  const keyId = (await adminCall(one, 'GET', `/admin/accounts/${id}/keys`)).body.keys[0].id as string;
  await adminCall(one, 'PATCH', `/admin/accounts/${id}/keys/${keyId}`, { scopes: ['history'] });
  await waitFor('the scope change on the second gateway', async () => (await status(two, first)) === 403, 1000);
  const refused = await two.get(`${SIMPLE}?api_key=${first}`);
  t.same(await refused.json(), { success: false, message: 'API key is not allowed to use this endpoint.' });

  await adminCall(one, 'PATCH', `/admin/accounts/${id}/keys/${keyId}`, {
    scopes: ['prices'],
    allowed_cidrs: ['192.0.2.0/24'],
  });
  await waitFor(
    'the allowlist on the second gateway',
    async () => {
      const r = await two.get(`${SIMPLE}?api_key=${first}`);
      return r.status === 403 && ((await r.json()) as { message: string }).message.includes('address');
    },
    1000,
  );
  await adminCall(one, 'PATCH', `/admin/accounts/${id}/keys/${keyId}`, { allowed_cidrs: ['127.0.0.0/8'] });
  await waitFor('the widened allowlist on the second gateway', async () => (await status(two, first)) === 200, 1000);
});
