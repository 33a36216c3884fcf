import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';

const SIMPLE = '/fuel-api/api/simple-current.php';

const evictions = async (gw: Parameters<typeof adminCall>[0]): Promise<number> => {
  const text = (await adminCall(gw, 'GET', '/metrics')).body as string;
  return Number(/^fuel_gateway_account_cache_evictions_total (\d+)$/m.exec(text)?.[1]);
};

t.test(
  'a cache smaller than the accounts in use evicts on every load, counts each eviction, and still counts exactly',
  async (t) => {
    const gw = await startGateway(t, { limits: { account_cache: { max_entries: 2 } }, demo_accounts: false });
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) keys.push((await newAccount(gw, { plan: 'starter', limit: 3 }, Date.now())).api_key);
    t.equal(await evictions(gw), 0, 'nothing evicted before any request');
    // Five accounts in turn through two entries: each request finds its account evicted and loads it.
    const seen: Array<[number, string | null]> = [];
    for (let round = 0; round < 4; round++)
      for (const key of keys) {
        const r = await gw.get(`${SIMPLE}?api_key=${key}`);
        await r.arrayBuffer();
        seen.push([r.status, r.headers.get('x-ratelimit-remaining')]);
      }
    const expected = [
      ...Array.from({ length: 5 }, () => [200, '2']),
      ...Array.from({ length: 5 }, () => [200, '1']),
      ...Array.from({ length: 5 }, () => [200, '0']),
      ...Array.from({ length: 5 }, () => [429, '0']),
    ];
    t.same(seen, expected, 'every account counted to its limit of 3 and refused after, as with a cache that holds all');
    t.equal(await evictions(gw), 20 - 2, 'every load past the first two evicted one entry');
    const usage = await gw.get(`/fuel-api/api/usage.php?api_key=${keys[0]}`);
    t.match(await usage.json(), { usage: { requests_used: 3, requests_remaining: 0 } });
  },
);

t.test('a cache that holds every account in use evicts nothing', async (t) => {
  const gw = await startGateway(t, { limits: { account_cache: { max_entries: 10 } }, demo_accounts: false });
  const keys: string[] = [];
  for (let i = 0; i < 5; i++) keys.push((await newAccount(gw, { plan: 'starter' }, Date.now())).api_key);
  for (let round = 0; round < 3; round++)
    for (const key of keys) t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 200);
  t.equal(await evictions(gw), 0);
});

t.test(
  'a cached account whose period ends is renewed from what the cache kept: its own limit and its key',
  async (t) => {
    const clock = new ManualClock(NOW);
    const gw = await startGateway(t, { demo_accounts: false }, { clock });
    const { api_key } = await newAccount(gw, { plan: 'starter', limit: 5 });
    const remaining = async (): Promise<[number, string | null]> => {
      const r = await gw.get(`${SIMPLE}?api_key=${api_key}`);
      await r.arrayBuffer();
      return [r.status, r.headers.get('x-ratelimit-remaining')];
    };
    t.same(
      [await remaining(), await remaining()],
      [
        [200, '4'],
        [200, '3'],
      ],
    );
    // A month on: the cached entry's period has ended, and the next one starts from its own limit of 5.
    clock.advanceTo(NOW + 31 * 86_400_000);
    t.same(await remaining(), [200, '4'], 'the new period counts from the account limit, not the plan of 2000');
    const usage = (await (await gw.get(`/fuel-api/api/usage.php?api_key=${api_key}`)).json()) as {
      usage: { requests_used: number; request_limit: number };
      key: { name: string; expires_at: string | null };
    };
    t.match(usage, { usage: { requests_used: 1, request_limit: 5 }, key: { name: 'default', expires_at: null } });
  },
);
