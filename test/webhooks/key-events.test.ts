import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { runCli } from '../helpers/cli.js';
import { ManualClock } from '../helpers/clock.js';
import type { TestContext } from '../helpers/context.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

const FAST = { allow_private_addresses: true, allow_http: true, retry_delays_ms: [100, 100], poll_interval_ms: 50 };
const KEY_EVENTS = ['key.created', 'key.revoked', 'key.rotated', 'key.expiring', 'key.leaked'];
const DAY = 86_400_000;

/** The account's endpoint, an operator's (no account) and another account's, each with its secret. */
async function endpoints(t: TestContext, gw: TestGateway, account: string) {
  const { body: other } = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  const add = async (accountId?: string): Promise<{ receiver: Receiver; secret: string }> => {
    const receiver = await startReceiver(t);
    const { body } = await adminCall(gw, 'POST', '/admin/webhooks', {
      url: receiver.url,
      events: KEY_EVENTS,
      ...(accountId && { account_id: accountId }),
    });
    return { receiver, secret: body.secret };
  };
  return { own: await add(account), operator: await add(), stranger: await add(other.account.id as string) };
}

/** The verified events a receiver got, one per webhook-id (delivery is at least once). */
const events = ({ receiver, secret }: { receiver: Receiver; secret: string }) => [
  ...new Map(receiver.verified(secret).map((g) => [g.headers['webhook-id'], g.event])).values(),
];

t.test(
  'creating, rotating with a grace and revoking a key: one event each, to the account and the operator',
  async (t) => {
    const gw = await startGateway(t, { demo_accounts: false, webhooks: FAST }, { clock: new ManualClock(NOW) });
    const { body: created } = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
    const account = created.account.id as string;
    const { own, operator, stranger } = await endpoints(t, gw, account);

    const expires = new Date(NOW + 90 * DAY).toISOString();
    const { body: erp } = await adminCall(gw, 'POST', `/admin/accounts/${account}/keys`, {
      name: 'erp',
      expires_at: expires,
    });
    const { status, body: rotated } = await adminCall(
      gw,
      'POST',
      `/admin/accounts/${account}/keys/${erp.key.id}/rotate`,
      {
        grace_s: 3600,
      },
    );
    t.equal(status, 201);
    t.equal((await adminCall(gw, 'DELETE', `/admin/accounts/${account}/keys/${erp.key.id}`)).status, 204);
    await waitFor('three events at both endpoints', () => events(own).length >= 3 && events(operator).length >= 3);

    const base = { account_id: account, key_name: 'erp' };
    for (const ep of [own, operator]) {
      const got = events(ep);
      t.same(
        got.map((e) => e.type),
        ['key.created', 'key.rotated', 'key.revoked'].filter((type) => got.some((e) => e.type === type)),
      );
      t.same(got.find((e) => e.type === 'key.created')?.data, {
        ...base,
        key_id: erp.key.id,
        hint: erp.api_key.slice(-4),
        expires_at: expires,
      });
      t.same(got.find((e) => e.type === 'key.rotated')?.data, {
        ...base,
        key_id: rotated.key.id,
        previous_key_id: erp.key.id,
        previous_expires_at: new Date(NOW + 3600_000).toISOString(),
        grace_s: 3600,
      });
      t.same(got.find((e) => e.type === 'key.revoked')?.data, { ...base, key_id: erp.key.id });
      t.equal(ep.receiver.got.length, ep.receiver.verified(ep.secret).length, 'every delivery verifies');
    }
    t.equal(stranger.receiver.got.length, 0, "another account's endpoint hears nothing");
    // Failed changes tell nothing: revoking the key again, and deleting the account's last key.
    t.equal((await adminCall(gw, 'DELETE', `/admin/accounts/${account}/keys/${erp.key.id}`)).status, 404);
    const { body: listed } = await adminCall(gw, 'GET', `/admin/accounts/${account}/keys`);
    for (const k of listed.keys as Array<{ id: string }>)
      await adminCall(gw, 'DELETE', `/admin/accounts/${account}/keys/${k.id}`);
    await adminCall(gw, 'POST', `/admin/accounts/${account}/keys`, { name: 'marker' });
    await waitFor('the marker', () => events(own).some((e) => e.data['key_name'] === 'marker'));
    t.equal(
      events(own).filter((e) => e.type === 'key.revoked').length,
      listed.keys.length,
      'one key.revoked per key removed',
    );
  },
);

t.test('key.expiring: once per key, expiry_warning_days before it expires, and again for a new expiry', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(
    t,
    { demo_accounts: false, webhooks: FAST, keys: { expiry_warning_days: 7 } },
    { clock },
  );
  const { body: created } = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  const account = created.account.id as string;
  const { own, operator } = await endpoints(t, gw, account);
  const expiresAt = new Date(NOW + 10 * DAY).toISOString();
  const { body: contractor } = await adminCall(gw, 'POST', `/admin/accounts/${account}/keys`, {
    name: 'contractor',
    expires_at: expiresAt,
  });
  const expiring = (ep: typeof own) => events(ep).filter((e) => e.type === 'key.expiring');
  const marker = async (name: string): Promise<void> => {
    await adminCall(gw, 'POST', `/admin/accounts/${account}/keys`, { name });
    await waitFor(name, () => events(own).some((e) => e.data['key_name'] === name));
  };

  clock.advance(2 * DAY);
  await marker('marker-1');
  t.same(expiring(own), [], 'eight days before: nothing yet');

  clock.advance(DAY + 120_000);
  await waitFor('key.expiring', () => expiring(own).length >= 1 && expiring(operator).length >= 1);
  t.same(expiring(own)[0]?.data, {
    account_id: account,
    key_id: contractor.key.id,
    key_name: 'contractor',
    expires_at: expiresAt,
  });
  for (let i = 0; i < 5; i++) clock.advance(DAY);
  await marker('marker-2');
  t.equal(expiring(own).length, 1, 'once, however many checks pass');

  // Moved forward, then into the window again: told again, for the new expiry.
  const later = new Date(clock.now() + 30 * DAY).toISOString();
  await adminCall(gw, 'PATCH', `/admin/accounts/${account}/keys/${contractor.key.id}`, { expires_at: later });
  clock.advance(24 * DAY);
  await waitFor('the second key.expiring', () => expiring(own).length >= 2);
  t.equal(expiring(own)[1]?.data['expires_at'], later);
  clock.advance(10 * DAY);
  await marker('marker-3');
  t.equal(expiring(own).length, 2, 'an expired key is not told again');
});

t.test('a key rotated with a grace is not told as expiring: its end is planned, key.rotated said so', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(
    t,
    { demo_accounts: false, webhooks: FAST, keys: { expiry_warning_days: 7 } },
    { clock },
  );
  const { body: created } = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  const account = created.account.id as string;
  const { own } = await endpoints(t, gw, account);
  const { body: erp } = await adminCall(gw, 'POST', `/admin/accounts/${account}/keys`, { name: 'erp' });
  // The grace ends in 3 days, well inside the 7-day warning.
  const rotated = await adminCall(gw, 'POST', `/admin/accounts/${account}/keys/${erp.key.id}/rotate`, {
    grace_s: 3 * 86_400,
  });
  t.equal(rotated.status, 201);
  // And a key of its own expiry in the same window, which is told.
  const { body: contractor } = await adminCall(gw, 'POST', `/admin/accounts/${account}/keys`, {
    name: 'contractor',
    expires_at: new Date(NOW + 2 * DAY).toISOString(),
  });
  clock.advance(61_000);
  await waitFor('key.expiring', () => events(own).some((e) => e.type === 'key.expiring'));
  clock.advance(61_000);
  await adminCall(gw, 'POST', `/admin/accounts/${account}/keys`, { name: 'marker' });
  await waitFor('the marker', () => events(own).some((e) => e.data['key_name'] === 'marker'));
  t.same(
    events(own)
      .filter((e) => e.type === 'key.expiring')
      .map((e) => e.data['key_id']),
    [contractor.key.id],
    'only the key with an expiry of its own',
  );
  t.ok(
    events(own).some((e) => e.type === 'key.rotated' && e.data['previous_key_id'] === erp.key.id),
    'the rotation was told, with when the old key ends',
  );
});

t.test(
  'on Redis, key.expiring is told once across gateways, also when another gateway takes the check over',
  async (t) => {
    const redis = await startRedis(t);
    const store = { store: redis.store };
    const settings = { demo_accounts: false, webhooks: FAST, ...store };
    const clocks = [new ManualClock(NOW), new ManualClock(NOW)];
    const first = await startGateway(t, settings, { clock: clocks[0] });
    const second = await startGateway(t, settings, { clock: clocks[1] });
    const { body: created } = await adminCall(first, 'POST', '/admin/accounts', { plan: 'starter' });
    const account = created.account.id as string;
    const { own } = await endpoints(t, first, account);
    await adminCall(first, 'POST', `/admin/accounts/${account}/keys`, {
      name: 'contractor',
      expires_at: new Date(NOW + 3 * DAY).toISOString(),
    });
    for (const c of clocks) c.advance(61_000);
    await waitFor('key.expiring', () => events(own).some((e) => e.type === 'key.expiring'));
    // The gateway that checked stops; the other takes the check over and finds the same key.
    await first.app.close();
    (clocks[1] as ManualClock).advance(61_000);
    await adminCall(second, 'POST', `/admin/accounts/${account}/keys`, { name: 'marker' });
    await waitFor('the marker', () => events(own).some((e) => e.data['key_name'] === 'marker'));
    t.equal(
      own.receiver.got.filter((g) => g.event.type === 'key.expiring').length,
      1,
      'one delivery of key.expiring in all',
    );
  },
);

t.test(
  'keys changed from the CLI are told too: the CLI writes the events, a running gateway delivers them',
  async (t) => {
    const redis = await startRedis(t);
    const gw = await startGateway(t, {
      demo_accounts: false,
      webhooks: FAST,
      store: redis.store,
    });
    const config = join(tempDir('fpg-key-events-cli-'), 'redis.json');
    writeFileSync(config, JSON.stringify({ store: redis.store, log: { access: false } }));
    const cli = async (...args: string[]) => {
      const r = await runCli([...args, '--config', config]);
      t.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout);
    };
    const { body: created } = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
    const account = created.account.id as string;
    const { own } = await endpoints(t, gw, account);
    const made = await cli('keys', 'create', account, '--name', 'telematics');
    const rotated = await cli('keys', 'rotate', account, made.key.id, '--grace', '1h');
    await cli('keys', 'revoke', account, rotated.key.id);
    await waitFor('three events', () => events(own).length >= 3);
    t.same(
      events(own)
        .map((e) => `${e.type} ${e.data['key_id']}`)
        .sort(),
      [`key.created ${made.key.id}`, `key.revoked ${rotated.key.id}`, `key.rotated ${rotated.key.id}`].sort(),
    );
    t.equal(events(own).find((e) => e.type === 'key.rotated')?.data['grace_s'], 3600);
  },
);
