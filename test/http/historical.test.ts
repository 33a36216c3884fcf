import { readFileSync } from 'node:fs';
import t from 'tap';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

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
    const none = (await (await gw.get(`${HIST}?api_key=${key}&month=12&year=2005`)).json()) as { results: unknown[] };
    t.same(none.results, [], 'a month without sets (before the history) is an empty list');
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
  const empty = await gw.get(`${HIST}?api_key=${key}&month=3&year=2005&format=csv`);
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
  await gw.app.store.prices.putPriceSet(
    { effective_date: '2026-12-02', updated_at: '2026-11-30 10:00:00', coastal: region, inland: region },
    false,
  );
  const r = (await (await gw.get(`${HIST}?api_key=${key}&month=12&year=2026`)).json()) as { results: unknown[] };
  t.same(r.results, []);
});

t.test('historical by region carries only that region, in JSON and CSV', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['starter'] as string;
  const both = (await (await gw.get(`${HIST}?api_key=${key}&month=3&year=2025`)).json()) as {
    results: Array<Record<string, unknown>>;
  };
  const inland = (await (await gw.get(`${HIST}?api_key=${key}&month=3&year=2025&region=inland`)).json()) as {
    month: number;
    results: Array<Record<string, unknown>>;
  };
  t.equal(inland.month, 3);
  t.same(
    inland.results,
    both.results.map((e) => ({ effective_date: e['effective_date'], inland: e['inland'] })),
  );
  const csv = await (await gw.get(`${HIST}?api_key=${key}&month=3&year=2025&region=coastal&format=csv`)).text();
  const lines = csv.trimEnd().split('\r\n');
  t.equal(lines.length, 2);
  t.match(lines[1], /^2025-03-05,coastal,/);
});

t.test('historical over a range of months: every set in it, oldest first, JSON or CSV', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['starter'] as string;
  const r = await gw.get(`${HIST}?api_key=${key}&from=2024-11&to=2025-02`);
  t.equal(r.status, 200);
  t.equal(r.headers.get('x-ratelimit-remaining'), '1999', 'one request, counted once');
  const text = await r.text();
  t.match(text, /^\{"success":true,"from":"2024-11","to":"2025-02","results":\[/);
  const body = JSON.parse(text) as { results: Array<{ effective_date: string }> };
  t.same(
    body.results.map((e) => e.effective_date),
    ['2024-11-06', '2024-12-04', '2025-01-01', '2025-02-05'],
  );
  const month = (await (await gw.get(`${HIST}?api_key=${key}&month=12&year=2024`)).json()) as {
    results: unknown[];
  };
  t.same(body.results[1], month.results[0], 'the same entry as the month form');
  const csv = await (await gw.get(`${HIST}?api_key=${key}&from=2024-11&to=2025-02&format=csv&region=inland`)).text();
  const rows = csv.trimEnd().split('\r\n');
  t.equal(rows.length, 5);
  t.ok(rows.slice(1).every((row) => row.includes(',inland,')));
  const json = await gw.get(`${HIST}?api_key=${key}&from=2024-11&to=2025-02&format=json`);
  t.equal(json.headers.get('content-type'), 'application/json', 'format=json is the default spelled out');
});

t.test('historical refuses an unknown format or region and a bad range with 400, uncounted', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['starter'] as string;
  const cases: Array<[string, string]> = [
    ['month=3&year=2025&format=xml', 'Invalid format.'],
    ['month=3&year=2025&format=', 'Invalid format.'],
    ['month=3&year=2025&region=north', 'Invalid region.'],
    ['month=3&year=2025&region=INLAND', 'Invalid region.'],
    ['month=3&year=2025&region=both', 'Invalid region.'],
    ['from=2025-03&to=2025-01', 'Invalid date range.'],
    ['from=2025-03', 'Invalid date range.'],
    ['from=2011-12&to=2026-12', 'Invalid date range.'],
    ['from=2025-01&to=2025-03&month=3&year=2025', 'Invalid date range.'],
    ['from=2025-01&to=2025-03&format=csv&region=x', 'Invalid region.'],
    ['month=13&year=2025&region=inland', 'Invalid month.'],
  ];
  for (const [q, message] of cases) {
    const r = await gw.get(`${HIST}?api_key=${key}&${q}`);
    t.equal(r.status, 400, q);
    t.same(await r.json(), { success: false, message }, q);
  }
  const ok = await gw.get(`${HIST}?api_key=${key}&month=3&year=2025`);
  t.equal(ok.headers.get('x-ratelimit-remaining'), '1999', 'none of the refused requests was counted');
});

t.test('historical.php?month=3&year=2012 answers the shipped March 2012 set, nulls kept null', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['developer'] as string;
  const file = JSON.parse(readFileSync('data/prices/sa-fuel-prices-2012-2022.json', 'utf8')) as Array<{
    effective_date: string;
    coastal: Record<string, string | null>;
    inland: Record<string, string | null>;
  }>;
  const march = file.find((s) => s.effective_date.startsWith('2012-03'));
  const r = await gw.get(`${HIST}?api_key=${key}&month=3&year=2012`);
  t.equal(r.status, 200);
  const body = (await r.json()) as { results: Array<Record<string, unknown>> };
  const region = (prices: Record<string, string | null> | undefined) => ({
    zone: null,
    price_basis: 'official_regional_reference',
    ...prices,
  });
  t.same(body.results, [
    { effective_date: '2012-03-07', coastal: region(march?.coastal), inland: region(march?.inland) },
  ]);
  const [entry] = body.results as Array<{ coastal: Record<string, unknown>; inland: Record<string, unknown> }>;
  t.equal(entry?.coastal['petrol_93'], null, 'coastal 93 unsourced: null');
  t.equal(entry?.inland['petrol_95'], '11.23', 'checked by hand: R11.23');
});

t.test('July 2024 is dated Thursday 4 July, the day its prices took effect', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['developer'] as string;
  const body = (await (await gw.get(`${HIST}?api_key=${key}&month=7&year=2024`)).json()) as {
    results: Array<{ effective_date: string }>;
  };
  t.same(
    body.results.map((x) => x.effective_date),
    ['2024-07-04'],
  );
});

t.test("a range may run from the first set of the history to December of the last set's year", async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['starter'] as string;
  const all = (await (await gw.get(`${HIST}?api_key=${key}&from=2012-01&to=2026-12`)).json()) as {
    results: Array<{ effective_date: string }>;
  };
  t.equal(all.results.length, 177, 'the whole shipped history in one answer (180 months)');
  t.equal(all.results[0]?.effective_date, '2012-01-04');
  t.equal(all.results.at(-1)?.effective_date, '2026-09-02');
  const before = await gw.get(`${HIST}?api_key=${key}&from=2011-12&to=2026-12`);
  t.equal(before.status, 400, 'a month more than the data spans is refused');
  const ten = await gw.get(`${HIST}?api_key=${key}&from=2000-01&to=2009-12`);
  t.equal(ten.status, 200, 'any 120 months stay allowed, even before the data');
});
