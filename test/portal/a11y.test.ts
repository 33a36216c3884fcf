// Every portal page in Chromium at 390 px: axe-core finds no serious or critical violation, the
// page does not scroll sideways, and the main flows work with the keyboard alone.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import type { Test } from 'tap';
import t from 'tap';
import { launchChromium, newPage } from '../helpers/browser.js';
import { startGateway } from '../helpers/gateway.js';
import { pageWithAuthenticator } from '../helpers/passkeys.js';
import { askLink } from '../helpers/portal.js';
import { freePort } from '../helpers/redis.js';
import { startSmtp } from '../helpers/smtp.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WIDTH = 390;

const smtp = await startSmtp(t);
const port = await freePort();
const base = `http://localhost:${port}`;
const gw = await startGateway(t, {
  listen: { public: { host: '127.0.0.1', port } },
  portal: { smtp: { url: smtp.url }, base_url: base, upgrade_url: 'https://example.test/upgrade' },
  limits: { invalid_key_throttle: { max_attempts: 1000 } },
});
const browser = await launchChromium(t);
let seq = 0;

/** axe-core's serious and critical violations on the page, as `rule: targets` lines. */
async function audit(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern: the page
  // itself still runs no inline script.
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: Array<Record<string, unknown>> }> } }).axe;
    const { violations } = await axe.run();
    return violations.map((v) => ({
      id: v.id as string,
      impact: v.impact as string,
      targets: (v.nodes as Array<{ target: string[] }>).map((n) => n.target.join(' ')),
    }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.targets.slice(0, 3).join(', ')}`);
}

async function check(t: Test, page: Page, name: string): Promise<void> {
  t.same(await audit(page), [], `${name}: no serious or critical violation`);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  t.ok(wide <= WIDTH, `${name}: fits ${WIDTH} px (${wide})`);
}

async function signedIn(page: Page): Promise<string> {
  const email = `a11y${++seq}@example.test`;
  await askLink(gw, email);
  await page.goto(await smtp.link(email));
  return email;
}

t.test(`every portal page at ${WIDTH} px: no serious or critical axe violation, no sideways scroll`, async (t) => {
  const { page, errors } = await pageWithAuthenticator(browser, WIDTH);
  await page.goto(`${base}/portal/`);
  await check(t, page, 'sign-in');
  await page.getByLabel('Email').fill('someone@example.test');
  await page.getByRole('button', { name: 'Email me a link' }).click();
  await check(t, page, 'link sent');
  await signedIn(page);
  await page.locator('#first-key-secret').waitFor();
  await check(t, page, 'first page with the first key');
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByRole('cell', { name: 'passkey', exact: true }).waitFor();
  await check(t, page, 'home: keys, usage, members, passkeys');
  await page.getByLabel("New key's name").fill('second');
  await page.getByRole('button', { name: 'Create key' }).click();
  await check(t, page, 'a new key shown once');
  await page.goto(`${base}/portal/try`);
  await page.locator('form.try').first().waitFor();
  await check(t, page, 'Try it, its forms built');
  t.same(errors, []);
});

t.test(
  'with the keyboard alone: sign in, then every control of the home page is reached, a key is made and rotated',
  async (t) => {
    const { page } = await newPage(browser, WIDTH);
    await page.goto(`${base}/portal/`);
    await page.keyboard.press('Tab');
    t.equal(await page.evaluate(() => document.activeElement?.id), 'email', 'the first stop is the address');
    await page.keyboard.type(`keys${++seq}@example.test`);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    await page.goto(await smtp.link(`keys${seq}@example.test`));

    const controls = await page.$$eval(
      'a[href], button, input:not([type=hidden]), select, [tabindex="0"]',
      (els) => els.filter((e) => (e as HTMLElement).offsetParent !== null).length,
    );
    const reached = new Set<string>();
    for (let i = 0; i < controls + 5; i++) {
      await page.keyboard.press('Tab');
      const at = await page.evaluate(() => {
        const e = document.activeElement as HTMLElement | null;
        if (e === null || e === document.body) return '';
        const all = [...document.querySelectorAll('a[href], button, input, select, [tabindex]')];
        return `${e.tagName}#${all.indexOf(e)}`;
      });
      if (at !== '') reached.add(at);
    }
    t.equal(reached.size, controls, `all ${controls} controls are reached by Tab`);

    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    let onName = false;
    for (let i = 0; i < controls + 2 && !onName; i++) {
      await page.keyboard.press('Tab');
      onName = await page.evaluate(() => document.activeElement?.id === 'key-name');
    }
    t.ok(onName, "the new key's name is reached by Tab");
    await page.keyboard.type('by keyboard');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Your new key' }).waitFor();
    t.match(await page.locator('code').first().textContent(), /^fpg_/, 'a key made without a mouse');

    await page.goto(`${base}/portal/`);
    let onGrace = false;
    for (let i = 0; i < controls + 2 && !onGrace; i++) {
      await page.keyboard.press('Tab');
      onGrace = await page.evaluate(() => document.activeElement?.getAttribute('name') === 'grace_s');
    }
    t.ok(onGrace, "a key's grace is reached by Tab");
    await page.keyboard.press('ArrowDown');
    t.equal(await page.evaluate(() => (document.activeElement as HTMLSelectElement).value), '900', '15 min, by key');
    await page.keyboard.press('Tab');
    t.equal(await page.evaluate(() => document.activeElement?.textContent), 'Rotate');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Your new key' }).waitFor();
    t.pass('a key rotated without a mouse');
  },
);
