import t from 'tap';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';

const HIST = '/fuel-api/api/historical.php';

t.test(
  'historical answers one entry per set effective in the month, with all four products, and is counted',
  async (t) => {
    const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
    const key = gw.app.demoKeys['developer'] as string;
    const r = await gw.get(`${HIST}?api_key=${key}&month=09&year=2026`);
    t.equal(r.status, 200);
    t.equal(r.headers.get('x-ratelimit-remaining'), '99');
    t.equal(
      await r.text(),
      '{"success":true,"month":9,"year":2026,"results":[{"effective_date":"2026-09-02",' +
        '"coastal":{"zone":null,"price_basis":"official_regional_reference","petrol_93":null,"petrol_95":"26.05","diesel_50ppm":"28.68","diesel_500ppm":"28.24"},' +
        '"inland":{"zone":null,"price_basis":"official_regional_reference","petrol_93":"26.76","petrol_95":"26.92","diesel_50ppm":"29.56","diesel_500ppm":"29.11"}}]}',
    );
    const one = (await (await gw.get(`${HIST}?api_key=${key}&month=1&year=2025`)).json()) as {
      month: number;
      results: Array<{ effective_date: string }>;
    };
    t.equal(one.month, 1, 'one-digit month');
    t.same(
      one.results.map((x) => x.effective_date),
      ['2025-01-01'],
    );
    const none = (await (await gw.get(`${HIST}?api_key=${key}&month=12&year=2019`)).json()) as { results: unknown[] };
    t.same(none.results, [], 'a month without sets is an empty list');
  },
);

t.test('historical as CSV carries the same rows', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['developer'] as string;
  const r = await gw.get(`${HIST}?api_key=${key}&month=3&year=2025&format=csv`);
  t.equal(r.headers.get('content-type'), 'text/csv; charset=utf-8');
  const lines = (await r.text()).trimEnd().split('\r\n');
  t.equal(lines[0], 'effective_date,region,zone,price_basis,petrol_93,petrol_95,diesel_50ppm,diesel_500ppm');
  t.equal(lines.length, 3);
  t.match(lines[1], /^2025-03-05,coastal,,official_regional_reference,/);
  const empty = await gw.get(`${HIST}?api_key=${key}&month=3&year=2019&format=csv`);
  t.equal((await empty.text()).trimEnd(), lines[0]);
});

t.test('historical never shows a set before it takes effect', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['developer'] as string;
  const region = {
    zone: null,
    price_basis: 'x',
    petrol_93: null,
    petrol_95: '1.00',
    diesel_50ppm: null,
    diesel_500ppm: null,
  };
  await gw.app.store.putPriceSet(
    { effective_date: '2026-12-02', updated_at: '2026-11-30 10:00:00', coastal: region, inland: region },
    false,
  );
  const r = (await (await gw.get(`${HIST}?api_key=${key}&month=12&year=2026`)).json()) as { results: unknown[] };
  t.same(r.results, []);
});
