import { readFileSync } from 'node:fs';
import t from 'tap';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';

const CHANGES = '/fuel-api/api/changes.php';
const PRODUCTS = ['petrol_93', 'petrol_95', 'diesel_50ppm', 'diesel_500ppm'] as const;
const REGIONS = ['coastal', 'inland'] as const;

type Prices = Record<(typeof PRODUCTS)[number], string | null>;
interface ShippedSet {
  effective_date: string;
  coastal: Prices;
  inland: Prices;
}

// Worked out here from the shipped file, by another road than the gateway's: rands and cents apart.
const toCents = (p: string): number => {
  const [rands, c] = p.split('.');
  return Number(rands) * 100 + Number(c);
};
const shipped = ['data/prices/sa-fuel-prices-2012-2022.json', 'data/prices/sa-fuel-prices-2023-2026.json']
  .flatMap((f) => JSON.parse(readFileSync(f, 'utf8')) as ShippedSet[])
  .sort((a, b) => a.effective_date.localeCompare(b.effective_date));

function expectedChanges(from: string, to: string): unknown[] {
  const out: unknown[] = [];
  shipped.forEach((set, i) => {
    const month = set.effective_date.slice(0, 7);
    if (month < from || month > to) return;
    const prev = shipped[i - 1];
    const entry: Record<string, unknown> = {
      effective_date: set.effective_date,
      previous_effective_date: prev?.effective_date ?? null,
    };
    for (const r of REGIONS) {
      const region: Record<string, number | null> = {};
      for (const p of PRODUCTS) {
        const a = prev?.[r][p] ?? null;
        const b = set[r][p];
        region[p] = a === null || b === null ? null : toCents(b) - toCents(a);
      }
      entry[r] = region;
    }
    out.push(entry);
  });
  return out;
}

t.test('changes over 2025 match the differences computed from the shipped history, in cents', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['starter'] as string;
  const r = await gw.get(`${CHANGES}?api_key=${key}&from=2025-01&to=2025-12`);
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-type'), 'application/json');
  t.equal(r.headers.get('x-ratelimit-remaining'), '1999');
  const text = await r.text();
  t.match(text, /^\{"success":true,"from":"2025-01","to":"2025-12","results":\[/, 'key order');
  const body = JSON.parse(text) as { results: Array<Record<string, unknown>>; usage: { requests_used: number } };
  t.same(Object.keys(body), ['success', 'from', 'to', 'results', 'usage']);
  t.equal(body.results.length, 12);
  t.same(body.results, expectedChanges('2025-01', '2025-12'));
  t.equal(body.usage.requests_used, 1);
  // Checked by hand against data/prices: inland 95 went from 22.34 to 21.62 on 2 April 2025.
  const april = body.results[3] as { effective_date: string; previous_effective_date: string; inland: Prices };
  t.equal(april.effective_date, '2025-04-02');
  t.equal(april.previous_effective_date, '2025-03-05');
  t.equal(april.inland.petrol_95, -72);
  // January 2025 is measured against December 2024, outside the range.
  t.equal((body.results[0] as { previous_effective_date: string }).previous_effective_date, '2024-12-04');
  // Coastal 93 stopped being published in April 2025: no price on one side is null, never 0.
  const may = body.results[4] as { coastal: Prices };
  t.equal(may.coastal.petrol_93, null);
  const text2 = await (await gw.get(`${CHANGES}?api_key=${key}&from=2025-01&to=2025-12`)).text();
  t.equal(text2, text.replace('"requests_used":1,', '"requests_used":2,').replace(':1999,', ':1998,'));
});

t.test('the first set of the history has no previous set: every change is null', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['starter'] as string;
  const body = (await (await gw.get(`${CHANGES}?api_key=${key}&from=2011-01&to=2012-02`)).json()) as {
    results: unknown[];
  };
  t.same(body.results, expectedChanges('2011-01', '2012-02'));
  t.same(body.results[0], {
    effective_date: '2012-01-04',
    previous_effective_date: null,
    coastal: { petrol_93: null, petrol_95: null, diesel_50ppm: null, diesel_500ppm: null },
    inland: { petrol_93: null, petrol_95: null, diesel_50ppm: null, diesel_500ppm: null },
  });
  const all = (await (await gw.get(`${CHANGES}?api_key=${key}&from=2012-01&to=2026-12`)).json()) as {
    results: unknown[];
  };
  t.equal(
    all.results.length,
    177,
    "a range from the first set to December of the last set's year holds the whole history",
  );
  t.same(all.results, expectedChanges('2012-01', '2026-12'));
  // January 2023 is measured against December 2022, across the two shipped files.
  t.same(expectedChanges('2023-01', '2023-01'), [all.results[132]]);
  t.equal((all.results[132] as { previous_effective_date: string }).previous_effective_date, '2022-12-07');
});

t.test('a bad date range is 400 Invalid date range. and is not counted', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['starter'] as string;
  const bad = [
    '',
    'from=2025-01',
    'to=2025-12',
    'from=2025-12&to=2025-01',
    'from=2025-1&to=2025-12',
    'from=2025-00&to=2025-12',
    'from=2025-01&to=2025-13',
    'from=25-01&to=25-12',
    'from=2025-01-01&to=2025-12-31',
    'from=&to=2025-12',
    'from=2011-12&to=2026-12',
  ];
  for (const q of bad) {
    const r = await gw.get(`${CHANGES}?api_key=${key}&${q}`);
    t.equal(r.status, 400, q);
    t.same(await r.json(), { success: false, message: 'Invalid date range.' }, q);
    t.equal(r.headers.get('x-ratelimit-remaining'), null, `${q}: no rate headers, nothing counted`);
  }
  const ok = (await (await gw.get(`${CHANGES}?api_key=${key}&from=2025-06&to=2025-06`)).json()) as {
    usage: { requests_used: number };
  };
  t.equal(ok.usage.requests_used, 1, 'none of the refused requests was counted');
  const unknown = await gw.get(`${CHANGES}?api_key=fpg_nope&from=2025-12&to=2025-01`);
  t.equal(unknown.status, 401, 'the key is judged before the query');
});

t.test('changes.php is off with historical data (501)', async (t) => {
  const gw = await startGateway(t, { prices: { historical_enabled: false } }, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['starter'] as string;
  const r = await gw.get(`${CHANGES}?api_key=${key}&from=2025-01&to=2025-12`);
  t.equal(r.status, 501);
  t.same(
    await r.json(),
    { success: false, message: gw.config.messages.historical_disabled, ref: r.headers.get('x-request-id') },
    'a 5xx body gives the request id as ref',
  );
  const used = await gw.get(`/fuel-api/api/usage.php?api_key=${key}`);
  t.equal(((await used.json()) as { usage: { requests_used: number } }).usage.requests_used, 0, 'not counted');
});

t.test('a new price set taking effect rebuilds the answers and the page: nothing stale is served', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, {}, { clock });
  const key = gw.app.demoKeys['starter'] as string;
  const region = {
    zone: null,
    price_basis: 'official_regional_reference',
    petrol_93: '26.00',
    petrol_95: '26.41',
    diesel_50ppm: '28.68',
    diesel_500ppm: null,
  };
  await gw.app.book.publish({
    effective_date: '2026-12-02',
    updated_at: '2026-11-30 10:00:00',
    coastal: { ...region, petrol_93: null },
    inland: region,
  });
  const q = `${CHANGES}?api_key=${key}&from=2026-09&to=2026-12`;
  type Body = { results: Array<{ effective_date: string; inland: Prices; coastal: Prices }> };
  const before = (await (await gw.get(q)).json()) as Body;
  t.same(
    before.results.map((r) => r.effective_date),
    ['2026-09-02'],
    'a scheduled set is not a change yet',
  );
  t.match(await (await gw.get('/')).text(), '<td data-price="inland.petrol_95">26.92</td>');
  clock.advance(9 * 24 * 3600_000);
  const after = (await (await gw.get(q)).json()) as Body;
  t.same(
    after.results.map((r) => r.effective_date),
    ['2026-09-02', '2026-12-02'],
  );
  t.same(after.results[1]?.inland, { petrol_93: -76, petrol_95: -51, diesel_50ppm: -88, diesel_500ppm: null });
  t.same(after.results[1]?.coastal, { petrol_93: null, petrol_95: 36, diesel_50ppm: 0, diesel_500ppm: null });
  t.match(await (await gw.get('/')).text(), '<td data-price="inland.petrol_95">26.41</td>');
});

t.test('repeated range parameters are refused, percent-encoded ones read', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['starter'] as string;
  const twice = await gw.get(`${CHANGES}?api_key=${key}&from=2025-01&to=2025-12&from=2020-01`);
  t.equal(twice.status, 400);
  t.same(await twice.json(), { success: false, message: 'Invalid date range.' });
  const encoded = await gw.get(`${CHANGES}?api_key=${key}&from=2025%2D01&to=2025-02`);
  t.equal(encoded.status, 200);
  const plain = await gw.get(`${CHANGES}?api_key=${key}&from=2025-01&to=2025-02`);
  const withoutUsage = (body: unknown) => ({ ...(body as Record<string, unknown>), usage: null });
  t.same(withoutUsage(await encoded.json()), withoutUsage(await plain.json()), 'the same changes as from=2025-01');
  const hist = '/fuel-api/api/historical.php';
  for (const [q, message] of [
    ['month=1&year=2025&format=csv&format=json', 'Invalid format.'],
    ['month=1&year=2025&region=inland&region=inland', 'Invalid region.'],
  ] as const) {
    const r = await gw.get(`${hist}?api_key=${key}&${q}`);
    t.equal(r.status, 400, q);
    t.same(
      await r.json(),
      {
        success: false,
        message: gw.config.messages[message === 'Invalid format.' ? 'invalid_format' : 'invalid_region'],
      },
      q,
    );
  }
});

t.test('changes.php takes region and format=csv like historical.php: same rows, cents, no usage in CSV', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['starter'] as string;
  const expected = expectedChanges('2025-01', '2025-12') as Array<Record<string, unknown>>;
  for (const region of REGIONS) {
    const r = await gw.get(`${CHANGES}?api_key=${key}&from=2025-01&to=2025-12&region=${region}`);
    t.equal(r.status, 200);
    const body = (await r.json()) as { results: unknown[]; usage: unknown };
    t.same(
      body.results,
      expected.map((e) => ({
        effective_date: e.effective_date,
        previous_effective_date: e.previous_effective_date,
        [region]: e[region],
      })),
      `only ${region}`,
    );
    t.ok(body.usage);
  }
  const csv = await gw.get(`${CHANGES}?api_key=${key}&from=2025-01&to=2025-12&format=csv`);
  t.equal(csv.status, 200);
  t.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.equal(csv.headers.get('x-ratelimit-remaining'), '1997', 'counted');
  const lines = (await csv.text()).split('\r\n');
  t.equal(lines[0], 'effective_date,previous_effective_date,region,petrol_93,petrol_95,diesel_50ppm,diesel_500ppm');
  t.equal(lines.length, 1 + 24 + 1, 'a row per set and region, each ending in CRLF');
  t.equal(lines.at(-1), '');
  const rows = lines.slice(1, -1).map((l) => l.split(','));
  t.same(
    rows.map((r) => [r[0], r[1], r[2], ...r.slice(3).map((v) => (v === '' ? null : Number(v)))]),
    expected.flatMap((e) =>
      REGIONS.map((reg) => [
        e.effective_date,
        e.previous_effective_date,
        reg,
        ...PRODUCTS.map((p) => (e[reg] as Record<string, number | null>)[p]),
      ]),
    ),
    'the JSON numbers, empty where null',
  );
  const inland = await (
    await gw.get(`${CHANGES}?api_key=${key}&from=2026-09&to=2026-09&region=inland&format=csv`)
  ).text();
  t.equal(inland.split('\r\n').length, 3);
  t.match(inland, /\r\n2026-09-02,2026-08-\d\d,inland,/);
  for (const [q, message] of <Array<[string, string]>>[
    ['format=xml', 'Invalid format.'],
    ['region=north', 'Invalid region.'],
    ['region=inland&region=coastal', 'Invalid region.'],
    ['format=csv&format=csv', 'Invalid format.'],
  ]) {
    const bad = await gw.get(`${CHANGES}?api_key=${key}&from=2025-01&to=2025-12&${q}`);
    t.equal(bad.status, 400, q);
    t.same(await bad.json(), { success: false, message });
  }
});

t.test('historical.php refuses a repeated month or year and a year outside 2000-2100', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['starter'] as string;
  const hist = '/fuel-api/api/historical.php';
  for (const [q, message] of <Array<[string, string]>>[
    ['month=1&month=2&year=2025', 'Invalid month.'],
    ['month=1&month=1&year=2025', 'Invalid month.'],
    ['month=1&year=2025&year=2024', 'Invalid year.'],
    ['month=1&year=0000', 'Invalid year.'],
    ['month=1&year=1999', 'Invalid year.'],
    ['month=1&year=2101', 'Invalid year.'],
    ['month=1&year=9999', 'Invalid year.'],
  ]) {
    const r = await gw.get(`${hist}?api_key=${key}&${q}`);
    t.equal(r.status, 400, q);
    t.same(await r.json(), { success: false, message }, q);
  }
  for (const [q, month, year] of [
    ['month=1&year=2000', 1, 2000],
    ['month=12&year=2100', 12, 2100],
  ] as const) {
    const r = await gw.get(`${hist}?api_key=${key}&${q}`);
    t.equal(r.status, 200, q);
    t.match(await r.json(), { success: true, month, year, results: [] }, `${q}: that month, no sets in it`);
  }
  t.equal(
    ((await (await gw.get(`/fuel-api/api/usage.php?api_key=${key}`)).json()) as { usage: { requests_used: number } })
      .usage.requests_used,
    2,
    'refusals count nothing',
  );
});
