import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const withKey = (key: string) => ({ headers: { 'X-API-Key': key } });
const WEBHOOKS = { allow_private_addresses: true, allow_http: true, poll_interval_ms: 50, timeout_ms: 1000 };

interface Usage {
  requests_used: number;
  request_limit: number;
  requests_remaining: number;
}

t.test(
  'overage: requests past the allowance succeed up to its cap, counted with remaining 0, then 429; thresholds past 100 raised',
  async (t) => {
    const gw = await startGateway(
      t,
      {
        plans: { starter: { overage: { max_percent: 50 }, alert_thresholds: [80, 100, 150] } },
        webhooks: WEBHOOKS,
      },
      { clock: new ManualClock(NOW) },
    );
    const receiver = await startReceiver(t);
    const hook = await adminCall(gw, 'POST', '/admin/webhooks', { url: receiver.url, events: ['usage.threshold'] });
    t.equal(hook.status, 201);
    const { account, api_key } = await newAccount(gw, { plan: 'starter', limit: 4 });
    const seen: Usage[] = [];
    for (let i = 0; i < 6; i++) {
      if (i === 4) {
        const head = await gw.get(SIMPLE, { method: 'HEAD', headers: { 'X-API-Key': api_key } });
        t.equal(head.status, 200, 'HEAD at the limit: the overage still admits');
      }
      const r = await gw.get(SIMPLE, withKey(api_key));
      t.equal(r.status, 200, `request ${i + 1} succeeds`);
      seen.push(((await r.json()) as { usage: Usage }).usage);
    }
    t.same(
      seen.map((u) => [u.requests_used, u.request_limit, u.requests_remaining]),
      [
        [1, 4, 3],
        [2, 4, 2],
        [3, 4, 1],
        [4, 4, 0],
        [5, 4, 0],
        [6, 4, 0],
      ],
    );
    const over = await gw.get(SIMPLE, withKey(api_key));
    t.equal(over.status, 429, 'past 50% more: the limit answer as today');
    t.equal(await over.text(), '{"success":false,"message":"Monthly API request limit reached."}');
    t.equal(over.headers.get('x-ratelimit-remaining'), '0');
    const [record] = (await gw.app.store.counting.periodRecords([account.id], 0, NOW * 2))[0] ?? [];
    t.same([record?.limit, record?.used], [4, 6], 'the ledger counts the overage, the record keeps the limit');
    await waitFor('three threshold events', () => receiver.got.length >= 3);
    t.same(
      receiver.got.map((g) => [g.event.data['threshold_percent'], g.event.data['requests_used']]).sort(),
      [
        [100, 4],
        [150, 6],
        [80, 4],
      ],
      '80% at ceil(3.2) = 4, 100% at 4, 150% at 6',
    );
  },
);

t.test("PATCH overage sets the account's own, over the plan's none; null clears it", async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { account, api_key } = await newAccount(gw, { plan: 'starter', limit: 2 });
  const set = await adminCall(gw, 'PATCH', `/admin/accounts/${account.id}`, { overage: { max_percent: 100 } });
  t.equal(set.status, 200);
  t.same(set.body.account.overage, { max_percent: 100 });
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await gw.get(SIMPLE, withKey(api_key))).status);
  t.same(statuses, [200, 200, 200, 200, 429], '2 plus 100% of 2');
  const cleared = await adminCall(gw, 'PATCH', `/admin/accounts/${account.id}`, { overage: null });
  t.notOk('overage' in cleared.body.account);
  t.equal((await gw.get(SIMPLE, withKey(api_key))).status, 429, 'used 4 of 2: a hard limit again');
  const shown = await adminCall(gw, 'GET', `/admin/accounts/${account.id}`);
  t.match(shown.body.usage, { requests_used: 4, request_limit: 2, requests_remaining: 0 });
});

/** The statuses of `n` requests in a row with `key`. */
async function statuses(gw: Awaited<ReturnType<typeof startGateway>>, key: string, n: number): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < n; i++) seen.push((await gw.get(SIMPLE, withKey(key))).status);
  return seen;
}

t.test('an overage of 50% on a limit of 3 rounds down: 4 admitted, then 429', async (t) => {
  const gw = await startGateway(
    t,
    { plans: { starter: { overage: { max_percent: 50 } } } },
    { clock: new ManualClock(NOW) },
  );
  const { api_key } = await newAccount(gw, { plan: 'starter', limit: 3 });
  t.same(await statuses(gw, api_key, 6), [200, 200, 200, 200, 429, 429], '3 plus floor(1.5)');
});

t.test('a grant counts toward the overage: limit 3 plus a grant of 2 at 50% admits 7, then 429', async (t) => {
  const gw = await startGateway(
    t,
    { plans: { starter: { overage: { max_percent: 50 } } } },
    { clock: new ManualClock(NOW) },
  );
  const { account, api_key } = await newAccount(gw, { plan: 'starter', limit: 3 });
  const grant = await adminCall(gw, 'POST', `/admin/accounts/${account.id}/grants`, { requests: 2 });
  t.equal(grant.status, 201);
  t.same(await statuses(gw, api_key, 9), [200, 200, 200, 200, 200, 200, 200, 429, 429], '5 plus floor(2.5)');
  const shown = await adminCall(gw, 'GET', `/admin/accounts/${account.id}`);
  t.match(shown.body.usage, { requests_used: 7, request_limit: 5, requests_remaining: 0 });
});
