import t from 'tap';
import type { TestContext } from '../helpers/context.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { type Person, signIn } from '../helpers/portal.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { startSmtp } from '../helpers/smtp.js';
import { scaled, waitFor } from '../helpers/wait.js';

const smtp = await startSmtp(t);
const redis = await startRedis(t);
const FAST = {
  allow_http: true,
  retry_delays_ms: [100, 100],
  poll_interval_ms: 50,
  // Scaled: beside the bench (load 12), a receiver starting a 50 MiB answer took over 1 s, and
  // once over 3 s, to send its head (the receiver runs in this test's own, starved, process).
  timeout_ms: scaled(3000),
};
const KEY_EVENTS = ['key.created', 'key.revoked', 'key.rotated'];
let seq = 0;
const address = (): string => `hooks${++seq}@example.test`;

interface Attempt {
  at: string;
  status: number | null;
  ms: number;
  body: string;
  error: string | null;
}
interface Delivery {
  id: string;
  event_type: string;
  state: string;
  attempts: Attempt[];
}
interface Made {
  endpoint: { id: string; url: string; events: string[] };
  secret: string;
}

async function gateway(t: TestContext, store: 'memory' | 'redis', webhooks: Record<string, unknown> = FAST) {
  return startGateway(t, {
    // The receivers are on loopback: the portal's own setting lets its endpoints reach them.
    portal: { smtp: { url: smtp.url }, webhooks: { allow_private_addresses: true } },
    limits: { invalid_key_throttle: { max_attempts: 1000 } },
    log: { access: false },
    webhooks,
    ...(store === 'redis' && {
      store: { type: 'redis', redis: { url: redis.url, key_prefix: `hooks${process.pid}_${++seq}:` } },
    }),
  });
}

const add = async (p: Person, url: string, events = KEY_EVENTS, description?: string): Promise<Made> => {
  const r = await p.call('POST', '/portal/api/webhooks', { url, events, ...(description && { description }) });
  if (r.status !== 201) throw new Error(`adding an endpoint answered ${r.status}: ${await r.text()}`);
  return (await r.json()) as Made;
};
const deliveries = async (p: Person, id: string): Promise<Delivery[]> =>
  ((await (await p.call('GET', `/portal/api/webhooks/${id}/deliveries`)).json()) as { deliveries: Delivery[] })
    .deliveries;
const status = async (r: Promise<Response>): Promise<number> => {
  const res = await r;
  await res.arrayBuffer();
  return res.status;
};
/** The verified events of one type a receiver got, one per webhook-id (delivery is at least once). */
const got = (r: Receiver, secret: string, type: string) => [
  ...new Map(
    r
      .verified(secret)
      .filter((g) => g.event.type === type)
      .map((g) => [g.headers['webhook-id'], g.event]),
  ).values(),
];

function onStore(store: 'memory' | 'redis', gw: TestGateway): void {
  const person = () => signIn(gw, smtp, address());

  t.test(
    `${store}: a test event arrives signed and is logged with status, duration and the answer's first 200 bytes; a replay is a new attempt`,
    async (t) => {
      const p = await person();
      const receiver = await startReceiver(t);
      receiver.mode = { status: 200, body: `${'A'.repeat(100)}${'B'.repeat(200)}` };
      const made = await add(p, receiver.url, ['key.created'], 'erp');
      t.match(made, { endpoint: { url: receiver.url, events: ['key.created'] }, secret: /^whsec_/ });
      const listed = (await (await p.call('GET', '/portal/api/webhooks')).json()) as { webhooks: object[] };
      t.match(listed.webhooks, [{ id: made.endpoint.id, description: 'erp' }]);
      t.notOk(JSON.stringify(listed).includes(made.secret), 'the list never shows the secret');
      const tested = await p.call('POST', `/portal/api/webhooks/${made.endpoint.id}/test`);
      t.equal(tested.status, 202);
      const { event_id } = (await tested.json()) as { event_id: string };
      await waitFor('the signed test event', () => got(receiver, made.secret, 'webhook.test').length === 1, 5000);
      let log: Delivery[] = [];
      await waitFor('the attempt in the log', async () => {
        log = await deliveries(p, made.endpoint.id);
        return log[0]?.attempts.length === 1;
      });
      const [first] = log;
      t.match(first, { id: event_id, event_type: 'webhook.test', state: 'delivered' });
      const attempt = first?.attempts[0] as Attempt;
      t.equal(attempt.status, 200);
      t.equal(attempt.body, `${'A'.repeat(100)}${'B'.repeat(100)}`, 'the first 200 bytes of the answer');
      t.ok(Number.isInteger(attempt.ms) && attempt.ms >= 0 && attempt.ms < scaled(1000), `took ${attempt.ms} ms`);
      t.ok(Math.abs(Date.parse(attempt.at) - Date.now()) < scaled(10_000), 'when it was attempted');
      receiver.mode = { status: 503, body: 'down for maintenance' };
      const replayed = await p.call('POST', `/portal/api/webhooks/${made.endpoint.id}/deliveries/${event_id}/replay`);
      t.equal(replayed.status, 202);
      await waitFor('the replay in the log', async () => {
        log = await deliveries(p, made.endpoint.id);
        return (log[0]?.attempts.length ?? 0) >= 2;
      });
      t.match(log[0]?.attempts[1], { status: 503, body: 'down for maintenance', error: 'status 503' });
      const sent = receiver.verified(made.secret).filter((g) => g.headers['webhook-id'] === event_id);
      t.ok(sent.length >= 2, 'the same event, signed, sent again');
      const logs = gw.logs();
      t.notOk(logs.includes(made.secret), 'the secret is in no log line');
      for (const action of ['webhook.create', 'webhook.test', 'webhook.replay'])
        t.match(logs, new RegExp(`"action":"${action}"[^\\n]*"from":"portal:${p.email}"`), `${action} audited`);
    },
  );

  t.test(`${store}: a key created in the portal reaches the account's own endpoint, not another's`, async (t) => {
    const [a, b] = [await person(), await person()];
    const [ra, rb] = [await startReceiver(t), await startReceiver(t)];
    const [ha, hb] = [await add(a, ra.url), await add(b, rb.url)];
    t.equal(await status(a.call('POST', '/portal/api/keys', { name: 'ci' })), 201);
    await waitFor("A's key.created at A's endpoint", () => got(ra, ha.secret, 'key.created').length === 1, 5000);
    t.match(got(ra, ha.secret, 'key.created')[0]?.data, { account_id: a.account, key_name: 'ci' });
    // A marker: B's own key event. Once it is at B's endpoint, A's would have been too.
    t.equal(await status(b.call('POST', '/portal/api/keys', { name: 'marker' })), 201);
    await waitFor("B's key.created at B's endpoint", () => got(rb, hb.secret, 'key.created').length === 1, 5000);
    t.same(
      rb.got.map((g) => g.event.data['account_id']),
      [b.account],
      "B's endpoint got B's event alone",
    );
  });

  t.test(`${store}: a member of another account gets 404 by every route, and nothing changes`, async (t) => {
    const [a, b] = [await person(), await person()];
    const receiver = await startReceiver(t);
    const made = await add(a, receiver.url);
    const hook = `/portal/api/webhooks/${made.endpoint.id}`;
    const { event_id } = (await (await a.call('POST', `${hook}/test`)).json()) as { event_id: string };
    await waitFor('the test delivered', () => receiver.got.length === 1, 5000);
    t.equal(await status(b.call('GET', `${hook}/deliveries`)), 404, 'deliveries');
    t.equal(await status(b.call('POST', `${hook}/test`)), 404, 'test');
    t.equal(await status(b.call('POST', `${hook}/deliveries/${event_id}/replay`)), 404, 'replay');
    t.equal(await status(b.call('DELETE', hook)), 404, 'delete');
    t.equal(await status(b.call('POST', `${hook}/delete`)), 404, 'delete by form');
    const theirs = (await (await b.call('GET', '/portal/api/webhooks')).json()) as { webhooks: unknown[] };
    t.same(theirs.webhooks, [], "B lists none of A's");
    t.equal((await deliveries(a, made.endpoint.id)).length, 1, "A's endpoint and log are as they were");
    t.equal(receiver.got.length, 1, 'no test or replay reached it');
    t.equal(await status(a.call('POST', `${hook}/deliveries/msg_unknown/replay`)), 404, 'an unknown delivery');
    t.equal(await status(a.call('DELETE', hook)), 204, 'its own member deletes it');
    t.equal(await status(a.call('GET', `${hook}/deliveries`)), 404, 'gone');
  });

  t.test(
    `${store}: at most 10 test events and replays a minute per account (then 429, nothing sent); a 50 MiB answer is cut`,
    async (t) => {
      const p = await person();
      const receiver = await startReceiver(t);
      const made = await add(p, receiver.url, ['key.created']);
      const hook = `/portal/api/webhooks/${made.endpoint.id}`;
      const codes = await Promise.all(Array.from({ length: 15 }, () => status(p.call('POST', `${hook}/test`))));
      t.same([codes.filter((c) => c === 202).length, codes.filter((c) => c === 429).length], [10, 5]);
      const replay = await p.call('POST', `${hook}/deliveries/msg_any/replay`);
      t.equal(replay.status, 429, 'a replay counts in the same bound');
      t.match(await replay.json(), { message: /^At most 10 test events and replays a minute: try again in \d+ s\.$/ });
      t.ok(Number(replay.headers.get('retry-after')) > 0, 'with Retry-After');
      await waitFor('ten delivered', async () => got(receiver, made.secret, 'webhook.test').length === 10, 10_000);
      t.equal((await deliveries(p, made.endpoint.id)).length, 10, 'no refused one was sent or logged');

      receiver.mode = { status: 200, body: 'x'.repeat(50 * 2 ** 20) };
      const other = await person();
      const theirs = await add(other, receiver.url, ['key.created']);
      const tested = other.call('POST', `/portal/api/webhooks/${theirs.endpoint.id}/test`);
      t.equal(await status(tested), 202, 'another account is not held by the first');
      let log: Delivery[] = [];
      await waitFor('the 50 MiB answer logged', async () => {
        log = await deliveries(other, theirs.endpoint.id);
        return log[0]?.attempts[0] !== undefined;
      });
      t.match(log[0]?.attempts[0], { status: 200, body: 'x'.repeat(200) }, 'its first 200 bytes, the rest unread');
    },
  );

  t.test(`${store}: a receiver that hangs holds neither the answer nor the page`, async (t) => {
    const p = await person();
    const receiver = await startReceiver(t);
    receiver.mode = 'hang';
    const made = await add(p, receiver.url);
    const started = Date.now();
    t.equal(await status(p.call('POST', `/portal/api/webhooks/${made.endpoint.id}/test`)), 202);
    await waitFor('the receiver holding the delivery', () => receiver.hanging === 1, 5000);
    t.equal(await status(p.call('GET', '/portal/webhooks')), 200, 'the page while it hangs');
    // Had the answer waited for the delivery, it would have taken the whole timeout.
    const ms = Date.now() - started;
    t.ok(ms < FAST.timeout_ms, `answered in ${ms} ms, under the ${FAST.timeout_ms} ms timeout`);
    await waitFor('the timeout in the log', async () => {
      const [d] = await deliveries(p, made.endpoint.id);
      return d?.attempts[0]?.error === 'timeout';
    });
  });
}

for (const store of ['memory', 'redis'] as const) onStore(store, await gateway(t, store));
