// Checks over the shipped price history (the files the default configuration loads) and the
// official cents behind it. Every finding must be written down as real in data/prices/SOURCES.md,
// in the table under "Data-quality findings", with its reason; a row there that no longer matches
// a finding fails too, so the list cannot go stale.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { readPriceFile } from '../../src/prices/price-file.js';
import { PRODUCTS, type PriceSet, REGIONS } from '../../src/prices/price-set-schema.js';
import { ROOT } from '../helpers/cli.js';

const DIR = join(ROOT, 'data/prices');
const files = [loadConfig({ env: {} }).prices.file].flat();
const history = files.flatMap((f) => readPriceFile(f)).sort((a, b) => a.effective_date.localeCompare(b.effective_date));

// Cents from the two-decimal rand string, by string arithmetic: no float enters a comparison.
const cents = (p: string | null): number | null => (p === null ? null : Number(p.replace('.', '')));

interface Finding {
  check: string;
  date: string;
  field: string;
  detail: string;
}

function findings(sets: readonly PriceSet[]): Finding[] {
  const out: Finding[] = [];
  sets.forEach((s, i) => {
    const day = new Date(`${s.effective_date}T00:00:00Z`).getUTCDay();
    if (day !== 3) out.push({ check: 'not_wednesday', date: s.effective_date, field: '-', detail: `weekday ${day}` });
    const i95 = cents(s.inland.petrol_95);
    const c95 = cents(s.coastal.petrol_95);
    if (i95 !== null && c95 !== null && i95 <= c95)
      out.push({
        check: 'inland_95_not_above_coastal',
        date: s.effective_date,
        field: '-',
        detail: `${i95} <= ${c95}`,
      });
    for (const r of REGIONS) {
      const low = cents(s[r].diesel_50ppm);
      const high = cents(s[r].diesel_500ppm);
      if (low !== null && high !== null && Math.abs(low - high) > 50)
        out.push({ check: 'diesel_grades_apart', date: s.effective_date, field: r, detail: `${low} vs ${high}` });
    }
    // The zone differential is one per month for every product (SOURCES.md): where both diesel
    // grades are known in both regions, their inland-coastal gaps agree within a cent of rounding.
    const gap = (p: 'diesel_50ppm' | 'diesel_500ppm'): number | null => {
      const a = cents(s.inland[p]);
      const b = cents(s.coastal[p]);
      return a === null || b === null ? null : a - b;
    };
    const g50 = gap('diesel_50ppm');
    const g500 = gap('diesel_500ppm');
    if (g50 !== null && g500 !== null && Math.abs(g50 - g500) > 1)
      out.push({ check: 'diesel_zone_gaps_differ', date: s.effective_date, field: '-', detail: `${g50} vs ${g500}` });
    const prev = sets[i - 1];
    if (!prev) return;
    for (const r of REGIONS)
      for (const p of PRODUCTS) {
        const a = cents(prev[r][p]);
        const b = cents(s[r][p]);
        if (a !== null && b !== null && Math.abs(b - a) * 4 > a)
          out.push({
            check: 'change_over_25_percent',
            date: s.effective_date,
            field: `${r}.${p}`,
            detail: `${a} -> ${b} (${(((b - a) / a) * 100).toFixed(1)}%)`,
          });
      }
  });
  return out;
}

/** The rows of the findings table in SOURCES.md: check | effective_date | field | reason. */
function writtenDown(): Array<{ check: string; date: string; field: string; reason: string }> {
  const text = readFileSync(join(DIR, 'SOURCES.md'), 'utf8');
  const start = text.indexOf('| check | effective_date | field | reason |');
  if (start < 0) return [];
  const rows: Array<{ check: string; date: string; field: string; reason: string }> = [];
  for (const line of text.slice(start).split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    const [check = '', date = '', field = '', reason = ''] = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    rows.push({ check, date, field, reason });
  }
  return rows;
}

t.test('the shipped history runs from 2012-01-04 to 2026-09-02, one set a month, each date once', async (t) => {
  t.equal(history[0]?.effective_date, '2012-01-04');
  t.equal(history.at(-1)?.effective_date, '2026-09-02');
  t.equal(history.length, 177, '132 sets for 2012-2022 and 45 for 2023-2026');
  const months = history.map((s) => s.effective_date.slice(0, 7));
  t.equal(new Set(months).size, months.length, 'no month twice, no date twice across the files');
});

t.test('every finding over the shipped data is written down as real in SOURCES.md, and nothing else is', async (t) => {
  const found = findings(history);
  t.comment(
    `${found.length} findings:\n${found.map((f) => `  ${f.check} ${f.date} ${f.field}: ${f.detail}`).join('\n')}`,
  );
  const rows = writtenDown();
  t.ok(rows.length > 0, 'SOURCES.md has the findings table');
  const key = (x: { check: string; date: string; field: string }): string => `${x.check} ${x.date} ${x.field}`;
  const listed = new Map(rows.map((r) => [key(r), r.reason]));
  for (const f of found) {
    const reason = listed.get(key(f));
    t.ok(reason !== undefined && reason.length >= 20, `${key(f)} (${f.detail}) is written down with its reason`);
  }
  const actual = new Set(found.map(key));
  for (const r of rows) t.ok(actual.has(key(r)), `${key(r)} in SOURCES.md is still a finding of the data`);
});

t.test('the checks find what they look for (a bad history, made up here)', async (t) => {
  const region = (p95: string, d50: string, d500: string) => ({
    zone: null,
    price_basis: 'official_regional_reference',
    petrol_93: null,
    petrol_95: p95,
    diesel_50ppm: d50,
    diesel_500ppm: d500,
  });
  const bad: PriceSet[] = [
    {
      effective_date: '2030-01-02',
      updated_at: '',
      coastal: region('20.00', '19.00', '19.00'),
      inland: region('21.00', '20.00', '20.00'),
    },
    {
      effective_date: '2030-02-07',
      updated_at: '',
      coastal: region('26.00', '19.00', '19.51'),
      inland: region('25.00', '20.00', '20.00'),
    },
  ];
  t.same(
    findings(bad).map((f) => `${f.check} ${f.date} ${f.field}`),
    [
      'not_wednesday 2030-02-07 -',
      'inland_95_not_above_coastal 2030-02-07 -',
      'diesel_grades_apart 2030-02-07 coastal',
      'diesel_zone_gaps_differ 2030-02-07 -',
      'change_over_25_percent 2030-02-07 coastal.petrol_95',
    ],
  );
});

t.test('the rand figures are the official cents rounded half-up, for every official figure shipped', async (t) => {
  const byDate = new Map(history.map((s) => [s.effective_date, s]));
  const csvs = readdirSync(DIR).filter((f) => f.endsWith('.csv'));
  t.same(csvs.sort(), ['fuel-prices-official-cents-2012-2022.csv', 'fuel-prices-official-cents.csv']);
  let rows = 0;
  for (const csv of csvs) {
    const [header, ...lines] = readFileSync(join(DIR, csv), 'utf8').trim().split(/\r?\n/);
    t.equal(header, 'effective_date,zone,product,cents_per_litre,source', csv);
    for (const line of lines) {
      const [date = '', zone = '', product = '', value = ''] = line.split(',');
      const set = byDate.get(date);
      t.ok(set, `${csv}: ${date} is a shipped set`);
      if (!set) continue;
      // Half-up on the decimal string: 2122.87 -> 2123 -> "21.23"; 2122.5 -> 2123.
      const [whole = '', frac = ''] = value.split('.');
      const rounded = Number(whole) + (Number(frac.charAt(0) || '0') >= 5 ? 1 : 0);
      const expected = `${Math.floor(rounded / 100)}.${String(rounded % 100).padStart(2, '0')}`;
      const shipped = set[zone as (typeof REGIONS)[number]]?.[product as (typeof PRODUCTS)[number]];
      if (shipped !== expected) t.fail(`${csv}: ${date} ${zone}.${product} ${value} c/l is shipped as ${shipped}`);
      rows++;
    }
  }
  t.equal(rows, 1144, 'every row of both files was checked (904 + 240)');
});
