import t from 'tap';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

// On 2026-11-23 the newest shipped set (2026-09-02) is 82 days old: South African prices change monthly.

t.test('stale prices are logged at start and reported by /readyz, which stays 200 by default', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  await waitFor('the warning at start', () => gw.logs().includes('prices served as current are stale'), 2000);
  const warning = gw
    .logs()
    .split('\n')
    .find((l) => l.includes('prices served as current are stale'));
  t.ok(warning, 'a warning at start');
  t.match(JSON.parse(warning as string), { level: 40, effective_date: '2026-09-02', age_days: 82, max_age_days: 35 });
  const r = await gw.get('/readyz');
  t.equal(r.status, 200);
  t.match(await r.json(), { ready: true, effective_date: '2026-09-02', age_days: 82, stale: true });
});

t.test('prices.stale_is_unready turns stale prices into 503 on /readyz', async (t) => {
  const gw = await startGateway(t, { prices: { stale_is_unready: true } }, { clock: new ManualClock(NOW) });
  const r = await gw.get('/readyz');
  t.equal(r.status, 503);
  t.match(await r.json(), { ready: false, prices: true, stale: true });
});

t.test('prices within max_age_days are not stale and log nothing', async (t) => {
  const gw = await startGateway(
    t,
    { prices: { max_age_days: 90, stale_is_unready: true } },
    { clock: new ManualClock(NOW) },
  );
  t.notMatch(gw.logs(), /stale/);
  const r = await gw.get('/readyz');
  t.equal(r.status, 200);
  t.match(await r.json(), { age_days: 82, stale: false });
});
