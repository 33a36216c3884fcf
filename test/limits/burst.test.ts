import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const USAGE = '/fuel-api/api/usage.php';
const withKey = (key: string) => ({ headers: { 'X-API-Key': key } });
// A starter cycle from NOW runs 30 days.
const PERIOD_S = 30 * 86_400;

t.test(
  'over the burst: 429 with Retry-After and both policies in the RateLimit fields, not counted; the window frees',
  async (t) => {
    const clock = new ManualClock(NOW);
    const gw = await startGateway(t, { plans: { starter: { burst: { limit: 3, window_s: 10 } } } }, { clock });
    const { api_key } = await newAccount(gw, { plan: 'starter' });
    for (let i = 1; i <= 3; i++) {
      const r = await gw.get(SIMPLE, withKey(api_key));
      t.equal(r.status, 200);
      t.equal(r.headers.get('ratelimit-policy'), `"period";q=2000;w=${PERIOD_S}, "burst";q=3;w=10`);
      t.equal(r.headers.get('ratelimit'), `"period";r=${2000 - i};t=${PERIOD_S}, "burst";r=${3 - i};t=10`);
      t.equal(r.headers.get('x-ratelimit-remaining'), String(2000 - i), 'X-RateLimit-* describe the allowance');
      await r.text();
    }
    clock.advance(4000);
    const over = await gw.get(SIMPLE, withKey(api_key));
    t.equal(over.status, 429);
    t.equal(await over.text(), '{"success":false,"message":"Too many requests."}');
    t.equal(over.headers.get('retry-after'), '6', 'whole seconds until the first admission leaves the window');
    t.equal(over.headers.get('x-ratelimit-limit'), '2000');
    t.equal(over.headers.get('x-ratelimit-remaining'), '1997', 'the refused request is not counted');
    t.equal(over.headers.get('ratelimit'), `"period";r=1997;t=${PERIOD_S - 4}, "burst";r=0;t=6`);
    const usage = (await (await gw.get(USAGE, withKey(api_key))).json()) as { usage: { requests_used: number } };
    t.equal(usage.usage.requests_used, 3, 'usage.php agrees: three counted');
    clock.advance(5999);
    t.equal((await gw.get(SIMPLE, withKey(api_key))).status, 429, 'still within the window 1 ms before');
    clock.advance(1);
    const again = await gw.get(SIMPLE, withKey(api_key));
    t.equal(again.status, 200, 'admitted once the first admission left the window');
    t.match(await again.text(), /"requests_used":4,/);
    const [record] =
      (await gw.app.store.counting.periodRecords([(await newAccountId(gw, api_key)) as string], 0, NOW * 2))[0] ?? [];
    t.equal(record?.used, 4, 'the ledger has the admitted requests only');
    t.same(
      record?.days.map(([, n]) => n),
      [4],
    );
  },
);

async function newAccountId(gw: Awaited<ReturnType<typeof startGateway>>, key: string): Promise<string | undefined> {
  const { hashKey } = await import('../../src/keys/keys.js');
  return (await gw.app.store.accounts.findByKeyHash(hashKey(key)))?.id;
}

t.test('the burst message is configurable; Retry-After is at least 1 s', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(
    t,
    { plans: { starter: { burst: { limit: 1, window_s: 1 } } }, messages: { burst: 'Slow down, please.' } },
    { clock },
  );
  const { api_key } = await newAccount(gw, { plan: 'starter' });
  t.equal((await gw.get(SIMPLE, withKey(api_key))).status, 200);
  clock.advance(999);
  const over = await gw.get(SIMPLE, withKey(api_key));
  t.equal(over.status, 429);
  t.equal(await over.text(), '{"success":false,"message":"Slow down, please."}');
  t.equal(over.headers.get('retry-after'), '1', '1 ms left is still a whole second');
});

t.test('an account without a burst limit: one policy, as before', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { api_key } = await newAccount(gw, { plan: 'starter' });
  const r = await gw.get(SIMPLE, withKey(api_key));
  t.equal(r.headers.get('ratelimit-policy'), `"period";q=2000;w=${PERIOD_S}`);
  t.equal(r.headers.get('ratelimit'), `"period";r=1999;t=${PERIOD_S}`);
});

t.test("PATCH burst sets the account's own limit over its keys together; null goes back to the plan's", async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, { plans: { starter: { burst: { limit: 100, window_s: 1 } } } }, { clock });
  const { account, api_key } = await newAccount(gw, { plan: 'starter' });
  const patched = await adminCall(gw, 'PATCH', `/admin/accounts/${account.id}`, { burst: { limit: 2, window_s: 60 } });
  t.equal(patched.status, 200);
  t.same(patched.body.account.burst, { limit: 2, window_s: 60 });
  // A rotated key is the same account: the window is the account's, not the key's.
  const rotated = await adminCall(gw, 'POST', `/admin/accounts/${account.id}/rotate-key`);
  const key2 = rotated.body.api_key as string;
  t.equal((await gw.get(SIMPLE, withKey(key2))).status, 200);
  t.equal((await gw.get(SIMPLE, withKey(key2))).status, 200);
  const over = await gw.get(SIMPLE, withKey(key2));
  t.equal(over.status, 429);
  t.equal(over.headers.get('ratelimit-policy'), `"period";q=2000;w=${PERIOD_S}, "burst";q=2;w=60`);
  const cleared = await adminCall(gw, 'PATCH', `/admin/accounts/${account.id}`, { burst: null });
  t.equal(cleared.status, 200);
  t.notOk('burst' in cleared.body.account, 'no burst of its own');
  const r = await gw.get(SIMPLE, withKey(key2));
  t.equal(r.status, 200, "the plan's 100/1 s applies again");
  t.equal(r.headers.get('ratelimit-policy'), `"period";q=2000;w=${PERIOD_S}, "burst";q=100;w=1`);
  t.ok(api_key !== key2);
});

t.test('a bad burst or overage in a PATCH is refused with what is wrong, and nothing changes', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { account } = await newAccount(gw, { plan: 'starter' });
  for (const [body, field] of [
    [{ burst: { limit: 10, window_s: 0 } }, /burst\.window_s: expected at least 1/],
    [{ burst: { limit: 10, window_s: 3601 } }, /burst\.window_s: expected at most 3600/],
    [{ burst: { limit: 0, window_s: 1 } }, /burst\.limit/],
    [{ burst: { limit: 1001, window_s: 1 } }, /burst\.limit: expected at most 1000/],
    [{ burst: '10/1' }, /burst/],
    [{ overage: { max_percent: 0 } }, /overage\.max_percent: expected at least 1/],
    [{ overage: { max_percent: 1001 } }, /overage\.max_percent: expected at most 1000/],
    [{ overage: { max_percent: 50, extra: 1 } }, /overage/],
  ] as const) {
    const r = await adminCall(gw, 'PATCH', `/admin/accounts/${account.id}`, body);
    t.equal(r.status, 400, JSON.stringify(body));
    t.match(r.body.message, field);
  }
  const shown = await adminCall(gw, 'GET', `/admin/accounts/${account.id}`);
  t.notOk('burst' in shown.body.account || 'overage' in shown.body.account, 'nothing was set');
});

t.test('config: burst and overage are checked; thresholds above 100 need the overage to reach them', async (t) => {
  const load = (plans: Record<string, unknown>) => () => loadConfig({ env: {}, overrides: { plans } });
  t.throws(load({ starter: { burst: { limit: 10, window_s: 3601 } } }), /plans\.starter\.burst\.window_s/);
  t.throws(load({ starter: { overage: { max_percent: 1001 } } }), /plans\.starter\.overage\.max_percent/);
  t.throws(load({ starter: { alert_thresholds: [80, 150] } }), /above 100 needs the plan's overage/);
  t.throws(load({ starter: { alert_thresholds: [80, 200], overage: { max_percent: 50 } } }), /expected at most 150/);
  const ok = loadConfig({
    env: {},
    overrides: { plans: { starter: { alert_thresholds: [80, 100, 150], overage: { max_percent: 50 } } } },
  });
  t.same(ok.plans['starter']?.alert_thresholds, [80, 100, 150]);
  t.equal(loadConfig({ env: {} }).plans['starter']?.burst, undefined, 'off by default');
});

t.test('a pass-through route: over the burst it answers 429 without reaching the origin or counting', async (t) => {
  const { startOrigin } = await import('../helpers/origin.js');
  const { waitFor } = await import('../helpers/wait.js');
  const origin = await startOrigin(t);
  const gw = await startGateway(t, {
    upstream: {
      url: origin.url,
      api_key: origin.key,
      poll_interval_ms: 60_000,
      proxy_paths: ['/origin/*'],
      cache: { max_bytes: 0 },
    },
    plans: { starter: { burst: { limit: 2, window_s: 3600 } } },
  });
  await waitFor('first poll', async () => (await gw.get('/readyz')).status === 200);
  const { api_key } = await newAccount(gw, { plan: 'starter' }, Date.now());
  for (let i = 1; i <= 2; i++) {
    const r = await gw.get(`/origin/echo?api_key=${api_key}`);
    t.equal(r.status, 200);
    t.match(r.headers.get('ratelimit'), new RegExp(`, "burst";r=${2 - i};t=3600$`));
    await r.text();
  }
  const seen = origin.seen.length;
  const over = await gw.get(`/origin/echo?api_key=${api_key}`);
  t.equal(over.status, 429);
  t.equal(await over.text(), '{"success":false,"message":"Too many requests."}');
  t.equal(over.headers.get('retry-after'), '3600');
  t.equal(over.headers.get('x-ratelimit-remaining'), '1998', 'not counted');
  t.equal(origin.seen.length, seen, 'the origin was not asked');
});
