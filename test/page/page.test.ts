import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import t from 'tap';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';

const PRODUCTS = ['petrol_93', 'petrol_95', 'diesel_50ppm', 'diesel_500ppm'] as const;
const REGIONS = ['coastal', 'inland'] as const;
type Prices = Record<(typeof PRODUCTS)[number], string | null>;
type Usage = Record<string, string | number>;

type Shipped = Record<(typeof REGIONS)[number], Prices> & { effective_date: string };
const shipped = ['data/prices/sa-fuel-prices-2012-2022.json', 'data/prices/sa-fuel-prices-2023-2026.json']
  .flatMap((f) => JSON.parse(readFileSync(f, 'utf8')) as Shipped[])
  .sort((a, b) => a.effective_date.localeCompare(b.effective_date));

t.test('the page in headless Chromium: prices, chart, usage check, same origin only, no console error', async (t) => {
  // A second origin for the CORS check: the same little server as http://127.0.0.1:P (allowed) and http://localhost:P (not).
  const other = createServer((_req, res) => res.end('<!doctype html><title>integration</title>'));
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  t.teardown(() => other.close());
  const otherPort = (other.address() as AddressInfo).port;
  const allowed = `http://127.0.0.1:${otherPort}`;

  const gw = await startGateway(t, { server: { cors_origins: [allowed] } }, { clock: new ManualClock(NOW) });
  const { api_key: key } = await newAccount(gw, { plan: 'starter' });
  const served = (await (await gw.get('/fuel-api/api/current.php', { headers: { 'X-API-Key': key } })).json()) as {
    data: Record<(typeof REGIONS)[number], Prices>;
  };

  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  const page = await context.newPage();
  const requested: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));

  // The browser's clock at the gateway's (manual) time, so the chart's last 30 days include NOW.
  await page.clock.setFixedTime(NOW + 60_000);
  const response = await page.goto(`${gw.base}/`);
  t.equal(response?.status(), 200);
  t.match(response?.headers()['content-security-policy'] ?? '', /^default-src 'self'/);

  for (const r of REGIONS) {
    for (const p of PRODUCTS) {
      const cell = await page.textContent(`[data-price="${r}.${p}"]`);
      t.equal(cell, served.data[r][p] ?? '–', `${r}.${p} shows the served price`);
    }
  }

  const series = await page.$$eval('.chart-range[data-range="all"] svg.wide [data-series]', (els) =>
    els.map((e) => [e.getAttribute('data-series'), Number(e.getAttribute('data-points'))]),
  );
  t.equal(series.length, 8, 'one series per region and product');
  const expected = REGIONS.flatMap((r) =>
    PRODUCTS.map((p) => [`${r}.${p}`, shipped.filter((s) => s[r][p] !== null).length]),
  );
  t.same(
    [...series].sort(),
    [...expected].sort(),
    'each series of the whole-history chart has one point per set with a price (sets all in effect at NOW)',
  );

  await page.fill('#usage-key', key);
  await page.click('#usage-check');
  await page.waitForSelector('#usage-result [data-usage="requests_used"]');
  const shown = Object.fromEntries(
    await page.$$eval('#usage-result [data-usage]', (els) =>
      els.map((e) => [e.getAttribute('data-usage'), e.textContent]),
    ),
  ) as Record<string, string>;
  const api = (await (await gw.get('/fuel-api/api/usage.php', { headers: { 'X-API-Key': key } })).json()) as {
    usage: Usage;
  };
  t.equal(api.usage['requests_used'], 1, 'only the test’s own current.php was counted');
  for (const field of ['requests_used', 'request_limit', 'requests_remaining']) {
    t.equal(shown[field], String(api.usage[field]), `the usage box shows ${field} as the API does`);
  }
  t.equal(shown['period_ends_at'], '23 December 2026, 10:00', 'the period end reads as a date');
  t.equal(shown['period'], '23 November 2026, 10:00 to 23 December 2026, 10:00', 'and so does the period');
  await page.waitForSelector('#usage-chart rect.bar', { state: 'attached' });
  const bars = await page.$$eval('#usage-chart rect.bar', (els) =>
    els.map((e) => [e.getAttribute('data-day'), e.getAttribute('data-requests')]),
  );
  t.equal(bars.length, 30, 'a bar for each of the last 30 days');
  t.same(bars.at(-1), ['2026-11-23', '1'], 'ending today, with the request counted');
  t.same(bars[0], ['2026-10-25', '0'], 'zeros included');
  t.match(await page.textContent('.stale'), /2026-09-02, more than 35 days ago/, 'stale prices are said so');

  t.ok(requested.length >= 4, `${requested.length} requests`);
  t.same(
    requested.filter((u) => !u.startsWith(`${gw.base}/`)),
    [],
    'the page loads nothing from another origin',
  );
  t.same(
    requested.filter((u) => u.includes(key)),
    [],
    'the key never goes into a URL',
  );
  const stored = await page.evaluate(() => [document.cookie, localStorage.length, sessionStorage.length]);
  t.same(stored, ['', 0, 0], 'nor into a cookie or storage');
  t.same((await context.cookies()).length, 0);
  const curl = await page.textContent('#docs pre');
  t.match(
    curl ?? '',
    new RegExp(`curl -s -H 'X-API-Key: YOUR_KEY' '${gw.base}/fuel-api/api/`),
    'curl lines name this host',
  );
  t.same(errors, [], 'no console error');

  if (process.env['PAGE_SCREENSHOT'])
    await page.screenshot({
      path: process.env['PAGE_SCREENSHOT'],
      fullPage: true,
      clip: { x: 0, y: 0, width: 1000, height: 1640 },
    });

  // A browser integration on a listed origin can call the API with the key in X-API-Key; another origin cannot.
  const fromOrigin = async (origin: string): Promise<unknown> => {
    const p = await context.newPage();
    await p.goto(`${origin}/`);
    const result = await p.evaluate(
      async ([url, k]) => {
        try {
          const r = await fetch(url as string, { headers: { 'X-API-Key': k as string } });
          return { status: r.status, remaining: r.headers.get('X-RateLimit-Remaining') };
        } catch {
          return 'blocked';
        }
      },
      [`${gw.base}/fuel-api/api/simple-current.php`, key],
    );
    await p.close();
    return result;
  };
  t.same(await fromOrigin(allowed), { status: 200, remaining: '1998' }, 'a listed origin may call the API');
  t.equal(await fromOrigin(`http://localhost:${otherPort}`), 'blocked', 'an unlisted origin may not');
});

t.test('page.enabled: false turns / into the 404 error body', async (t) => {
  const gw = await startGateway(t, { page: { enabled: false } }, { clock: new ManualClock(NOW) });
  const r = await gw.get('/');
  t.equal(r.status, 404);
  t.same(await r.json(), { success: false, message: 'Endpoint not found.' });
  t.equal((await gw.get('/assets/page.js')).status, 404);
  t.equal((await gw.get('/fuel-api/openapi.json')).status, 200, 'the API description stays');
});

t.test('the page and its assets are unmetered, cacheable where fixed, and answer HEAD', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const js = await gw.get('/assets/page.js');
  t.equal(js.status, 200);
  t.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.equal(js.headers.get('cache-control'), 'public, max-age=3600');
  t.equal(js.headers.get('x-ratelimit-remaining'), null);
  const head = await gw.get('/', { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(await head.text(), '');
  const a = await (await gw.get('/')).text();
  t.equal(await (await gw.get('/')).text(), a, 'the same page while the price set holds');
  t.notMatch(a, /<script>|style=|<style/, 'nothing inline for the CSP to refuse');
});

t.test('before any price set takes effect the page shows dashes and no chart', async (t) => {
  const future = join(mkdtempSync(join(tmpdir(), 'fpg-page-')), 'future.json');
  const region = { petrol_93: null, petrol_95: '30.00', diesel_50ppm: null, diesel_500ppm: null };
  writeFileSync(future, JSON.stringify([{ effective_date: '2030-01-02', coastal: region, inland: region }]));
  const gw = await startGateway(t, { prices: { file: future } }, { clock: new ManualClock(NOW) });
  const html = await (await gw.get('/')).text();
  t.match(html, '<td data-price="inland.petrol_95">–</td>');
  t.match(html, 'No price set is in effect yet.');
  t.match(html, 'No price history yet.');
  t.notMatch(html, '30.00', 'a scheduled set is not shown');
});

t.test('the page says so when its prices are older than prices.max_age_days, and only then', async (t) => {
  const fresh = await startGateway(t, {}, { clock: new ManualClock(Date.parse('2026-09-10T12:00:00+02:00')) });
  t.notMatch(await (await fresh.get('/')).text(), /class="stale"/, 'eight days old: no notice');
  const old = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  t.match(
    await (await old.get('/')).text(),
    /<p class="stale" role="status">These prices took effect on <time datetime="2026-09-02">2026-09-02<\/time>, more than 35 days ago/,
  );
});

const launch = async (t: { teardown(fn: () => unknown): void }) => {
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
