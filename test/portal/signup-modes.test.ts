import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { redisConfig, runCli } from '../helpers/cli.js';
import { startGateway } from '../helpers/gateway.js';
import { askLink, follow, signIn } from '../helpers/portal.js';
import { startRedis } from '../helpers/redis.js';
import { startSmtp } from '../helpers/smtp.js';
import { scaled, sleep } from '../helpers/wait.js';

const smtp = await startSmtp(t);
const limits = { invalid_key_throttle: { max_attempts: 1000 } };
let seq = 0;
const address = (): string => `signup${++seq}@example.test`;

interface Waiting {
  id: string;
  email: string;
  requested_at: string;
}
const waiting = async (gw: Parameters<typeof adminCall>[0]): Promise<Waiting[]> =>
  (await adminCall(gw, 'GET', '/admin/signups')).body.signups;

t.test(
  'approval: a new address waits for an operator, who approves it (an account, a new link) or rejects it',
  async (t) => {
    const redis = await startRedis(t);
    const gw = await startGateway(t, {
      store: redis.store,
      portal: { signup: 'approval', signup_plan: 'starter', smtp: { url: smtp.url } },
      limits,
    });
    const person = address();
    t.equal((await askLink(gw, person)).status, 202);
    const first = await follow(await smtp.link(person, 1));
    t.same([first.status, first.cookie], [202, null], 'the link files a sign-up and signs nobody in');
    t.equal((await askLink(gw, person)).status, 202);
    await follow(await smtp.link(person, 2));
    const [signup, ...more] = await waiting(gw);
    t.match(signup, { id: /^signup_[0-9a-f]{24}$/, email: person, requested_at: /^\d{4}-/ });
    t.same(more, [], 'an address waits once');

    const approved = await adminCall(gw, 'POST', `/admin/signups/${signup?.id}/approve`);
    t.equal(approved.status, 201);
    t.match(approved.body, {
      signup: { email: person },
      account: { plan: 'starter', label: person },
      member: { email: person, role: 'owner' },
      sign_in_link_sent: true,
    });
    t.notOk('api_key' in approved.body, 'no secret: the owner makes their own key in the portal');
    t.equal((await adminCall(gw, 'POST', `/admin/signups/${signup?.id}/approve`)).status, 404, 'approved once');
    t.same(await waiting(gw), []);
    const mailed = await follow(await smtp.link(person, 3));
    t.equal(mailed.status, 303, 'the approval mails a link that signs the owner in');
    const me = await gw.get('/portal/api/me', { headers: { cookie: mailed.cookie ?? '' } });
    t.match(await me.json(), { email: person, account: { id: approved.body.account.id, role: 'owner' } });

    const other = address();
    await askLink(gw, other);
    await follow(await smtp.link(other, 1));
    const [theirs] = await waiting(gw);
    const rejected = await adminCall(gw, 'POST', `/admin/signups/${theirs?.id}/reject`);
    t.equal(rejected.status, 200);
    t.match(rejected.body, { signup: { email: other } });
    t.same(await waiting(gw), [], 'rejected: no longer waiting');
    t.equal((await adminCall(gw, 'POST', `/admin/signups/${theirs?.id}/approve`)).status, 404, 'nor approvable');
    t.match(gw.logs(), /"action":"signup.approve"[^\n]*"from":"127.0.0.1"/, 'audited');
    t.match(gw.logs(), /"action":"signup.reject"/);

    // The CLI, on the same store: it approves too (the link is sent only by a gateway that approves).
    const third = address();
    await askLink(gw, third);
    await follow(await smtp.link(third, 1));
    const config = redisConfig({ url: redis.url }, { portal: { signup_plan: 'starter' } });
    const listed = await runCli(['signups', 'list', '--config', config]);
    t.equal(listed.code, 0);
    const [cliWaiting] = (JSON.parse(listed.stdout) as { signups: Waiting[] }).signups;
    t.equal(cliWaiting?.email, third);
    const cliApproved = await runCli(['signups', 'approve', cliWaiting?.id ?? '', '--config', config]);
    t.equal(cliApproved.code, 0, cliApproved.stderr);
    t.match(JSON.parse(cliApproved.stdout), { member: { email: third, role: 'owner' }, sign_in_link_sent: false });
    t.equal((await runCli(['signups', 'reject', cliWaiting?.id ?? '', '--config', config])).code, 1, 'gone');
    const p = await signIn(gw, smtp, third, 2);
    t.equal(p.account, JSON.parse(cliApproved.stdout).account.id, 'the approved person signs in to the account');
  },
);

t.test('invite: only members get a link; a new address gets the same 202, no mail and no account', async (t) => {
  const gw = await startGateway(t, { portal: { signup: 'invite', smtp: { url: smtp.url } }, limits });
  const stranger = address();
  const invited = address();
  const made = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  const account = made.body.account.id as string;
  t.equal(
    (await adminCall(gw, 'POST', `/admin/accounts/${account}/members`, { email: invited, role: 'owner' })).status,
    201,
  );
  const before = (await adminCall(gw, 'GET', '/admin/accounts')).body.accounts.length;
  t.equal((await askLink(gw, stranger)).status, 202, 'the same answer');
  t.equal((await askLink(gw, invited)).status, 202);
  const p = await signIn(gw, smtp, invited, 2);
  t.equal(p.account, account, 'the invited address signs in to its account');
  await sleep(scaled(300));
  t.notOk(
    smtp.mails.some((m) => m.to === stranger),
    'no mail to an address nobody invited',
  );
  t.equal((await adminCall(gw, 'GET', '/admin/accounts')).body.accounts.length, before, 'no account made');
  t.same((await adminCall(gw, 'GET', '/admin/signups')).body, { signups: [] });
});
