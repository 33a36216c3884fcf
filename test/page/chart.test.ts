// The public page's history chart, its changes column and its zones, in headless Chromium.
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import t from 'tap';
import { ManualClock } from '../helpers/clock.js';
import type { TestContext } from '../helpers/context.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

const PRODUCTS = ['petrol_93', 'petrol_95', 'diesel_50ppm', 'diesel_500ppm'] as const;
const REGIONS = ['coastal', 'inland'] as const;
type Prices = Record<(typeof PRODUCTS)[number], string | null>;
type Shipped = Record<(typeof REGIONS)[number], Prices> & { effective_date: string };
const shipped = ['data/prices/sa-fuel-prices-2012-2022.json', 'data/prices/sa-fuel-prices-2023-2026.json']
  .flatMap((f) => JSON.parse(readFileSync(f, 'utf8')) as Shipped[])
  .sort((a, b) => a.effective_date.localeCompare(b.effective_date));

const launch = async (t: TestContext) => {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  return browser;
};

t.test(
  'the history chart: 1 y / 5 y / all, series told apart by colour and marker, values on hover and focus',
  async (t) => {
    const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
    const browser = await launch(t);
    const page = await (await browser.newContext({ viewport: { width: 1000, height: 900 } })).newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${gw.base}/`);

    const visible = () =>
      page.$$eval('.chart-range', (els) =>
        els.filter((e) => !(e as HTMLElement).hidden).map((e) => e.getAttribute('data-range')),
      );
    t.same(await visible(), ['all'], 'the whole history is shown first');
    const buttons = await page.$$eval('button[data-range]', (els) => els.map((e) => e.textContent));
    t.same(buttons, ['1 y', '5 y', 'All'], 'a range selector');

    // Each series: its colour, marker shape and marker fill; all 8 differ even with dashes ignored.
    const looks = await page.$$eval('.chart-range[data-range="all"] svg.wide [data-series]', (els) =>
      els.map((e) => {
        const name = e.getAttribute('data-series') as string;
        const marker = e.closest('svg')?.querySelector(`[data-marker="${name}"]`);
        return [name, e.getAttribute('stroke'), marker?.getAttribute('data-shape'), marker?.getAttribute('fill')].join(
          ' ',
        );
      }),
    );
    t.equal(looks.length, 8);
    t.equal(
      new Set(looks.map((l) => l.split(' ').slice(1).join(' '))).size,
      8,
      `8 distinct looks: ${looks.join('; ')}`,
    );
    t.notOk(
      looks.some((l) => l.includes('undefined')),
      'every series has markers',
    );
    const legend = await page.$$eval('#history .legend li', (els) => els.map((e) => e.textContent?.trim()));
    t.equal(legend.length, 8, 'a legend entry per series');

    // Hover: the readout gives that set's eight prices, as served.
    const last = shipped.at(-1) as Shipped;
    const prev = shipped.at(-2) as Shipped;
    const readout = () =>
      page.$$eval('#readout [data-readout]', (els) =>
        Object.fromEntries(els.map((e) => [e.getAttribute('data-readout'), e.textContent])),
      );
    const expectReadout = (set: Shipped) => ({
      date: set.effective_date,
      ...Object.fromEntries(REGIONS.flatMap((r) => PRODUCTS.map((p) => [`${r}.${p}`, set[r][p] ?? '–']))),
    });
    await page.hover(`.chart-range[data-range="all"] svg.wide .hit[data-date="${prev.effective_date}"]`);
    t.same(await readout(), expectReadout(prev), 'hovering a month shows its prices');

    // 1 y: only the last year's sets; keyboard focus steps through them.
    await page.click('button[data-range="1y"]');
    t.same(await visible(), ['1y']);
    t.equal(await page.getAttribute('button[data-range="1y"]', 'aria-pressed'), 'true');
    const dates = await page.$$eval('.chart-range[data-range="1y"] svg.wide .hit', (els) =>
      els.map((e) => e.getAttribute('data-date') as string),
    );
    const yearBefore = `${Number(last.effective_date.slice(0, 4)) - 1}${last.effective_date.slice(4)}`;
    t.same(
      dates,
      shipped.filter((s) => s.effective_date >= yearBefore).map((s) => s.effective_date),
      'a year back from the last set',
    );
    await page.focus('.chart-range[data-range="1y"] svg.wide');
    t.same(await readout(), expectReadout(last), 'focus shows the latest set');
    await page.keyboard.press('ArrowLeft');
    t.same(await readout(), expectReadout(prev), 'the left arrow steps back a month');
    await page.keyboard.press('Home');
    t.equal((await readout())['date'], dates[0], 'Home goes to the first set of the range');
    await page.click('button[data-range="5y"]');
    const five = await page.$$eval('.chart-range[data-range="5y"] svg.wide .hit', (els) => els.length);
    t.equal(
      five,
      shipped.filter(
        (s) => s.effective_date >= `${Number(last.effective_date.slice(0, 4)) - 5}${last.effective_date.slice(4)}`,
      ).length,
    );
    t.same(errors, [], 'no console error');
  },
);

t.test('at 390 px the page fits, and the chart, legend and prices stay legible', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const browser = await launch(t);
  const page = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
  await page.goto(`${gw.base}/`);
  t.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 390, 'no sideways scrolling');
  const chart = await page.$('.chart-range[data-range="all"] svg.narrow');
  t.ok(await chart?.isVisible(), 'the narrow chart is the one shown');
  t.notOk(await (await page.$('.chart-range[data-range="all"] svg.wide'))?.isVisible(), 'not the wide one');
  const ticks = await page.$$eval('.chart-range[data-range="all"] svg.narrow text.tick', (els) =>
    els.map((e) => e.getBoundingClientRect().height),
  );
  t.ok(ticks.length > 4 && Math.min(...ticks) >= 10, `axis labels at least 10 px high (${Math.min(...ticks)})`);
  const legendPx = await page.$eval('#history .legend li', (e) => Number.parseFloat(getComputedStyle(e).fontSize));
  t.ok(legendPx >= 13, `legend text ${legendPx} px`);
  const box = await (await page.$('[data-price="inland.petrol_95"]'))?.boundingBox();
  t.ok(box && box.x + box.width <= 390, 'the prices fit the screen');
});

t.test("the page shows each price's change from the month before, in cents, as changes.php gives it", async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { api_key: key } = await newAccount(gw, { plan: 'starter' });
  const api = (await (
    await gw.get('/fuel-api/api/changes.php?from=2026-09&to=2026-09', { headers: { 'X-API-Key': key } })
  ).json()) as { results: Array<Record<(typeof REGIONS)[number], Record<string, number | null>>> };
  const html = await (await gw.get('/')).text();
  for (const r of REGIONS)
    for (const p of PRODUCTS) {
      const c = api.results[0]?.[r][p];
      const text = c === null || c === undefined ? '–' : `${c > 0 ? '+' : c < 0 ? '−' : ''}${Math.abs(c)} c`;
      t.match(html, `<td data-change="${r}.${p}">${text}</td>`, `${r}.${p}: ${text}`);
    }
  t.match(html, 'since 2026-08-05', 'against the set before');
});

t.test('the page says which magisterial zones the two regions are, and that other towns differ', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const text = (await (await gw.get('/')).text()).replace(/<[^>]+>/g, '');
  for (const words of [
    'zone 1A',
    'zone 9C',
    'Cape Town',
    'Durban',
    'Gqeberha',
    'East London',
    'Mossel Bay',
    'Sasolburg',
    'Rustenburg',
    'Witbank',
    'George (zone 3A)',
  ])
    t.match(text, words);
});
