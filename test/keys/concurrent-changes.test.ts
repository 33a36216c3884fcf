import t, { type Test } from 'tap';
import { type GatewayProcess, gatewayProcess, redisConfig } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';

const SIMPLE = '/fuel-api/api/simple-current.php';

interface Answer {
  status: number;
  text: string;
  body: any;
}

const redis = await startRedis(t);
const file = redisConfig({ url: redis.url });
const gateways = await Promise.all([0, 1, 2].map(() => gatewayProcess(t, file)));
const admins = gateways.map((g) => g.admin);
const first = gateways[0] as GatewayProcess;

async function call(admin: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const r = await fetch(`${admin}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await r.text();
  return { status: r.status, text, body: text === '' ? null : JSON.parse(text) };
}

/** The same request to every admin port at once. */
const toEvery = (method: string, path: string, body?: unknown): Promise<Answer[]> =>
  Promise.all(admins.map((a) => call(a, method, path, body)));

async function newAccount(): Promise<{ id: string; key: string; keyId: string }> {
  const created = await call(first.admin, 'POST', '/admin/accounts', { plan: 'business' });
  const id = created.body.account.id as string;
  const keys = await call(first.admin, 'GET', `/admin/accounts/${id}/keys`);
  return { id, key: created.body.api_key as string, keyId: keys.body.keys[0].id as string };
}

async function liveKeys(id: string): Promise<Array<{ id: string; expires_at: string | null }>> {
  const listed = await call(first.admin, 'GET', `/admin/accounts/${id}/keys`);
  return (listed.body.keys as Array<{ id: string; expires_at: string | null; expired: boolean }>).filter(
    (k) => !k.expired,
  );
}

const statusOf = async (key: string): Promise<number> => (await fetch(`${first.base}${SIMPLE}?api_key=${key}`)).status;

/** One winner, the others 409 naming its new key (never a secret), and one live successor. */
async function oneRotation(
  t: Test,
  answers: Answer[],
  id: string,
  old: { id: string; key: string },
  graceS: number,
): Promise<void> {
  const won = answers.filter((a) => a.status === 200 || a.status === 201);
  const lost = answers.filter((a) => a.status === 409);
  t.equal(won.length, 1, `exactly one rotation (statuses ${answers.map((a) => a.status).join(', ')})`);
  t.equal(lost.length, answers.length - 1, 'every other is 409');
  const successor = won[0]?.body.key.id as string;
  for (const a of lost) {
    t.equal(a.body.successor_key_id, successor, 'the 409 names the successor');
    t.match(a.body.message, successor, 'and says so in its message');
    t.notMatch(a.text, /api_key|fpg_/, 'and carries no secret');
  }
  const live = await liveKeys(id);
  const expected = graceS > 0 ? [old.id, successor].sort() : [successor];
  t.same(
    live.map((k) => k.id).sort(),
    expected,
    graceS > 0 ? 'the old key in its grace and one successor' : 'one successor',
  );
  t.equal(await statusOf(won[0]?.body.api_key), 200, "the winner's key works");
  t.equal(
    await statusOf(old.key),
    graceS > 0 ? 200 : 401,
    graceS > 0 ? 'the old key works its grace' : 'the old key stops',
  );
}

t.test("an account's rotate-key sent to three gateways at once rotates once", async (t) => {
  const { id, key, keyId } = await newAccount();
  const answers = await toEvery('POST', `/admin/accounts/${id}/rotate-key`, { grace_s: 600 });
  await oneRotation(t, answers, id, { id: keyId, key }, 600);
});

t.test('rotate-key naming its key, with no grace, sent to three gateways at once rotates once', async (t) => {
  const { id, key, keyId } = await newAccount();
  const answers = await toEvery('POST', `/admin/accounts/${id}/rotate-key`, { key_id: keyId });
  await oneRotation(t, answers, id, { id: keyId, key }, 0);
});

t.test("a key's rotate sent to three gateways at once rotates once", async (t) => {
  for (const graceS of [0, 600]) {
    const { id, key, keyId } = await newAccount();
    const answers = await toEvery('POST', `/admin/accounts/${id}/keys/${keyId}/rotate`, { grace_s: graceS });
    await oneRotation(t, answers, id, { id: keyId, key }, graceS);
  }
});

t.test('a key already rotated out cannot be rotated again: 409 naming its successor', async (t) => {
  for (const graceS of [0, 600]) {
    const { id, keyId } = await newAccount();
    const rotated = await call(first.admin, 'POST', `/admin/accounts/${id}/keys/${keyId}/rotate`, { grace_s: graceS });
    t.equal(rotated.status, 201);
    const successor = rotated.body.key.id as string;
    for (const admin of admins) {
      const again = await call(admin, 'POST', `/admin/accounts/${id}/keys/${keyId}/rotate`, { grace_s: graceS });
      t.equal(again.status, 409, `grace ${graceS}: a second rotation of the old key is refused`);
      t.equal(again.body.successor_key_id, successor);
      t.notMatch(again.text, /api_key|fpg_/);
    }
    const account = await call(first.admin, 'POST', `/admin/accounts/${id}/rotate-key`, { key_id: keyId });
    t.equal(account.status, 409, 'rotate-key naming the old key: 409 too');
    t.equal(account.body.successor_key_id, successor);
    if (graceS > 0) {
      const unnamed = await call(first.admin, 'POST', `/admin/accounts/${id}/rotate-key`, {});
      t.equal(unnamed.status, 409, 'rotate-key while the old key is in its grace: 409');
      t.equal(unnamed.body.successor_key_id, successor);
    }
    t.same(
      (await liveKeys(id)).map((k) => k.id).sort(),
      graceS > 0 ? [keyId, successor].sort() : [successor],
      'no key was added',
    );
    const next = await call(first.admin, 'POST', `/admin/accounts/${id}/keys/${successor}/rotate`, {});
    t.equal(next.status, 201, 'the successor itself rotates');
  }
});

t.test('30 key creations on one account across three gateways at once: only the key limit refuses', async (t) => {
  const { id } = await newAccount();
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      call(admins[i % 3] as string, 'POST', `/admin/accounts/${id}/keys`, { name: `k${i}` }),
    ),
  );
  const statuses = answers.map((a) => a.status);
  t.equal(statuses.filter((s) => s === 201).length, 19, 'the limit of 20 less the key the account had');
  const refused = answers.filter((a) => a.status !== 201);
  t.equal(refused.length, 11);
  for (const a of refused) {
    t.equal(a.status, 409, 'refused by the limit');
    t.match(a.body.message, /already has 20 keys that have not expired/, 'with the limit’s own message');
  }
  t.notOk(
    answers.some((a) => /kept changing/.test(a.text)),
    'no "kept changing"',
  );
  t.equal((await liveKeys(id)).length, 20);
});
