import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import t from 'tap';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { tempDir } from '../helpers/tmp.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

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
          // A CORS refusal and a dead gateway both reject: a no-cors request (no key, so not
          // counted) resolves only when the gateway is there, so only then is it 'blocked'.
          return fetch(url as string, { mode: 'no-cors' }).then(
            () => 'blocked',
            () => 'unreachable',
          );
        }
      },
      [`${gw.base}/fuel-api/api/simple-current.php`, key],
    );
    await p.close();
    return result;
  };
  t.same(await fromOrigin(allowed), { status: 200, remaining: '1998' }, 'a listed origin may call the API');
  t.equal(await fromOrigin(`http://localhost:${otherPort}`), 'blocked', 'an unlisted origin may not');
  const preflight = await gw.get('/fuel-api/api/simple-current.php', {
    method: 'OPTIONS',
    headers: {
      Origin: `http://localhost:${otherPort}`,
      'Access-Control-Request-Method': 'GET',
      'Access-Control-Request-Headers': 'x-api-key',
    },
  });
  t.equal(preflight.headers.get('access-control-allow-origin'), null, 'the gateway itself refused that origin');
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
  const future = join(tempDir('fpg-page-'), 'future.json');
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
