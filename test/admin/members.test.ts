import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { redisConfig, runCli } from '../helpers/cli.js';
import { startGateway } from '../helpers/gateway.js';
import { signIn } from '../helpers/portal.js';
import { startRedis } from '../helpers/redis.js';
import { startSmtp } from '../helpers/smtp.js';

const smtp = await startSmtp(t);
const redis = await startRedis(t);
const gw = await startGateway(t, {
  store: redis.store,
  portal: { smtp: { url: smtp.url } },
  limits: { invalid_key_throttle: { max_attempts: 1000 } },
});
const cliConfig = redisConfig({ url: redis.url });
const cli = async (...args: string[]) => {
  const r = await runCli([...args, '--config', cliConfig]);
  return { code: r.code, body: r.code === 0 ? JSON.parse(r.stdout) : r.stderr };
};
let seq = 0;
const address = (): string => `op-member${++seq}@example.test`;
const emails = (body: { members: Array<{ email: string; role: string }> }) =>
  body.members.map((m) => `${m.email}:${m.role}`);

t.test(
  "an operator lists, adds and removes an account's members over the admin API, which the portal then honours",
  async (t) => {
    const owner = await signIn(gw, smtp, address());
    const path = `/admin/accounts/${owner.account}/members`;
    t.same(emails((await adminCall(gw, 'GET', path)).body), [`${owner.email}:owner`]);

    const dev = address();
    const added = await adminCall(gw, 'POST', path, { email: dev.toUpperCase(), role: 'developer' });
    t.equal(added.status, 201);
    t.match(added.body, { member: { account_id: owner.account, email: dev, role: 'developer', added_at: String } });
    t.equal((await adminCall(gw, 'POST', path, { email: dev, role: 'owner' })).status, 409, 'a member already');
    t.equal((await adminCall(gw, 'POST', path, { email: 'not an address' })).status, 400);
    t.equal((await adminCall(gw, 'POST', path, { email: address(), role: 'admin' })).status, 400, 'no such role');
    t.equal((await adminCall(gw, 'POST', '/admin/accounts/acct_none/members', { email: dev })).status, 404);

    const person = await signIn(gw, smtp, dev);
    t.equal(person.account, owner.account, 'the added address signs in to the account');
    const shown = await adminCall(gw, 'GET', `/admin/accounts/${owner.account}`);
    t.same(emails(shown.body), [`${owner.email}:owner`, `${dev}:developer`].sort(), 'the account shows its members');
    const signedIn = (shown.body.members as Array<{ email: string; last_sign_in_at?: string }>).find(
      (m) => m.email === dev,
    );
    t.match(signedIn, { last_sign_in_at: /^\d{4}-\d\d-\d\dT/ }, 'each member with their last sign-in');
    t.equal(shown.body.last_portal_sign_in_at, signedIn?.last_sign_in_at, "and the account's last, the newest of them");
    const fresh = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
    const none = await adminCall(gw, 'GET', `/admin/accounts/${fresh.body.account.id}`);
    t.same([none.body.members, none.body.last_portal_sign_in_at], [[], null], 'an account nobody signed in to');

    const last = await adminCall(gw, 'DELETE', `${path}/${encodeURIComponent(owner.email)}`);
    t.equal(last.status, 409, 'never the last owner');
    t.equal((await adminCall(gw, 'DELETE', `${path}/nobody@example.test`)).status, 404);
    t.equal((await adminCall(gw, 'DELETE', `${path}/${dev}`)).status, 204, 'by address, as written');
    t.equal((await person.call('GET', '/portal/api/keys')).status, 401, 'a removed member loses access at once');
    t.match(gw.logs(), new RegExp(`"action":"member.add"[^\\n]*"account_id":"${owner.account}"`), 'audited');
    t.match(gw.logs(), new RegExp(`"action":"member.remove"[^\\n]*"account_id":"${owner.account}"`));
    t.notMatch(gw.logs(), new RegExp(`"audit":\\{[^\\n]*${dev}`), 'the audit line names no address of a member');
  },
);

t.test('fuel-gateway members list|add|remove: the same operations from the command line', async (t) => {
  const owner = await signIn(gw, smtp, address());
  const second = address();
  const added = await cli('members', 'add', owner.account, second, '--role', 'owner');
  t.equal(added.code, 0);
  t.match(added.body, { member: { email: second, role: 'owner' } });
  const bad = await cli('members', 'add', owner.account, address(), '--role', 'boss');
  t.equal(bad.code, 1, 'a bad role');
  t.match(bad.body, /role/);
  t.same(
    emails((await cli('members', 'list', owner.account)).body),
    [`${owner.email}:owner`, `${second}:owner`].sort(),
  );
  const removed = await cli('members', 'remove', owner.account, owner.email);
  t.equal(removed.code, 0, 'one of two owners goes');
  t.same(removed.body, { removed: { account_id: owner.account, email: owner.email } });
  const refused = await cli('members', 'remove', owner.account, second);
  t.not(refused.code, 0, 'the last owner stays');
  t.match(refused.body, /last owner/);
  t.same(emails((await adminCall(gw, 'GET', `/admin/accounts/${owner.account}/members`)).body), [`${second}:owner`]);
});
