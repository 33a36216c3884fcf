// The usage chart's values on hover and keyboard focus, and the Copy button of a secret shown once, in Chromium.
import t from 'tap';
import { launchChromium, newPage } from '../helpers/browser.js';
import { startGateway } from '../helpers/gateway.js';
import { askLink } from '../helpers/portal.js';
import { startSmtp } from '../helpers/smtp.js';
import { waitFor } from '../helpers/wait.js';

const smtp = await startSmtp(t);
const gw = await startGateway(t, { portal: { smtp: { url: smtp.url } } });
const browser = await launchChromium(t);

t.test('a secret shown once has a Copy button that puts it on the clipboard', async (t) => {
  const { context, page, errors } = await newPage(browser, 390);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.base });
  await askLink(gw, 'copy@example.test');
  await page.goto(await smtp.link('copy@example.test'));
  const secret = (await page.locator('#first-key-secret').textContent()) ?? '';
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByText('Copied.').waitFor();
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), secret, 'the secret is on the clipboard');
  await page.getByLabel("New key's name").fill('second');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('button', { name: 'Copy' }).click();
  t.match(await page.evaluate(() => navigator.clipboard.readText()), /^fpg_/, "a new key's page has one too");
  t.not(await page.evaluate(() => navigator.clipboard.readText()), secret);
  t.same(errors, []);
});

t.test(
  'the usage chart: 90 days, a day’s count on hover and on keyboard focus, the arrow keys walk the days',
  async (t) => {
    const { page, errors } = await newPage(browser, 390);
    await askLink(gw, 'chart@example.test');
    await page.goto(await smtp.link('chart@example.test'));
    const secret = (await page.locator('#first-key-secret').textContent()) ?? '';
    for (let i = 0; i < 3; i++)
      await (await gw.get(`/fuel-api/api/simple-current.php?api_key=${secret}`)).arrayBuffer();
    const days = page.locator('.usage-chart .day');
    await waitFor(
      "today's 3 requests on the chart",
      async () => {
        await page.reload();
        return /: 3 requests$/.test((await days.last().getAttribute('aria-label')) ?? '');
      },
      5000,
    );
    t.equal(await days.count(), 90, '90 days');
    const api = (await page.evaluate(async () => (await fetch('/portal/api/usage')).json())) as {
      days: Array<{ day: string; requests: number }>;
    };
    const labels = await days.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    t.same(
      labels,
      api.days.map((d) => `${d.day}: ${d.requests} request${d.requests === 1 ? '' : 's'}`),
      "the chart's days are the usage API's",
    );
    const shown = (i: number) =>
      days
        .nth(i)
        .locator('.value')
        .evaluate((e) => getComputedStyle(e).visibility === 'visible');
    t.equal(await shown(89), false, 'no value shown before');
    await days.nth(89).locator('.fill').hover();
    t.equal(await shown(89), true, 'hover shows the count');
    await page.mouse.move(0, 0);
    t.same(
      await days.evaluateAll((els) => els.filter((e) => e.getAttribute('tabindex') === '0').length),
      1,
      'the chart is one tab stop',
    );
    await days.nth(89).focus();
    t.equal(await shown(89), true, 'focus shows the count');
    await page.keyboard.press('ArrowLeft');
    t.equal(
      await page.evaluate(() => document.activeElement?.getAttribute('aria-label')),
      labels[88],
      'ArrowLeft: the day before',
    );
    t.equal(await shown(88), true);
    t.equal(await shown(89), false, 'and only that one');
    await page.keyboard.press('Home');
    t.equal(
      await page.evaluate(() => document.activeElement?.getAttribute('aria-label')),
      labels[0],
      'Home: the oldest',
    );
    t.same(errors, []);
  },
);
