import { type Item, parseList } from 'structured-headers';
import t, { type Test } from 'tap';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const USAGE = '/fuel-api/api/usage.php';
const END = Date.parse('2026-12-23T10:00:00+02:00');

/** A draft field parsed as RFC 9651 says: a List of exactly one String item named "period". */
function periodItem(t: Test, value: string | null): Map<string, unknown> {
  t.type(value, 'string', 'the field is present');
  const list = parseList(value as string);
  t.equal(list.length, 1, 'one policy');
  const [name, params] = list[0] as Item;
  t.equal(name, 'period', 'a String item named "period"');
  return params as Map<string, unknown>;
}

t.test('metered answers carry RateLimit-Policy and RateLimit as Structured Field Lists', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, {}, { clock });
  const { api_key: key } = await newAccount(gw, { plan: 'starter', limit: 3 });
  for (let i = 1; i <= 3; i++) {
    clock.advanceTo(NOW + i * 60_000);
    const r = await gw.get(`${SIMPLE}?api_key=${key}`);
    t.equal(r.status, 200);
    const policy = periodItem(t, r.headers.get('ratelimit-policy'));
    t.same(Object.fromEntries(policy), { q: 3, w: (END - NOW) / 1000 }, 'quota and the period in seconds');
    const rate = periodItem(t, r.headers.get('ratelimit'));
    t.same(Object.fromEntries(rate), { r: 3 - i, t: (END - NOW) / 1000 - i * 60 }, 'remaining and seconds to the end');
    t.equal(r.headers.get('x-ratelimit-remaining'), String(3 - i), 'beside the X-RateLimit-* ones');
  }
  const refused = await gw.get(`${SIMPLE}?api_key=${key}`);
  t.equal(refused.status, 429);
  t.same(Object.fromEntries(periodItem(t, refused.headers.get('ratelimit'))), { r: 0, t: (END - NOW) / 1000 - 180 });
  t.ok(refused.headers.get('ratelimit-policy'), 'the 429 names its policy');
  const usage = await gw.get(USAGE, { headers: { 'X-API-Key': key } });
  t.same(Object.fromEntries(periodItem(t, usage.headers.get('ratelimit'))), { r: 0, t: (END - NOW) / 1000 - 180 });
  const head = await gw.get(`${SIMPLE}?api_key=${key}`, { method: 'HEAD' });
  t.equal(head.status, 429, 'HEAD of a used-up allowance');
  t.ok(head.headers.get('ratelimit'));
});

t.test('a trial names its 14-day window; errors before counting carry no rate fields', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { api_key: key } = await newAccount(gw, { plan: 'developer' });
  const r = await gw.get(`${SIMPLE}?api_key=${key}`);
  t.same(Object.fromEntries(periodItem(t, r.headers.get('ratelimit-policy'))), { q: 100, w: 14 * 86400 });
  const missing = await gw.get(SIMPLE);
  t.equal(missing.status, 401);
  t.equal(missing.headers.get('ratelimit'), null);
});
