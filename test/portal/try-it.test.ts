// "Try it" in Chromium: a form per GET operation of the served /fuel-api/openapi.json, the key
// pasted by the person sent in X-API-Key from the page, and kept nowhere.
import t from 'tap';
import { launchChromium, newPage } from '../helpers/browser.js';
import { startGateway } from '../helpers/gateway.js';
import { askLink } from '../helpers/portal.js';
import { startSmtp } from '../helpers/smtp.js';

const smtp = await startSmtp(t);
const gw = await startGateway(t, { portal: { smtp: { url: smtp.url } } });
const browser = await launchChromium(t);

t.test(
  "Try it: one form per GET operation of the API's document; a pasted key is sent in a header and kept nowhere",
  async (t) => {
    const { context, page, errors } = await newPage(browser, 390);
    await askLink(gw, 'try@example.test');
    await page.goto(await smtp.link('try@example.test'));
    const key = (await page.locator('#first-key-secret').textContent()) ?? '';
    await page.getByRole('link', { name: 'Send requests to the API with one of your keys' }).click();
    await page.getByRole('heading', { name: 'Try the API' }).waitFor();
    const doc = (await (await gw.get('/fuel-api/openapi.json')).json()) as { paths: Record<string, { get?: unknown }> };
    const gets = Object.entries(doc.paths)
      .filter(([, item]) => item.get !== undefined)
      .map(([path]) => path);
    await page.locator('form.try').first().waitFor();
    t.same(
      await page.locator('form.try').evaluateAll((fs) => fs.map((f) => f.getAttribute('data-path'))),
      gets,
      'a form per GET operation',
    );

    const sent: Array<{ url: string; key: string | undefined }> = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/fuel-api/api/'))
        sent.push({ url: r.url(), key: r.headers()['x-api-key'] });
    });
    await page.getByLabel('Your API key').fill(key);
    const simple = page.locator('form.try[data-path="/fuel-api/api/simple-current.php"]');
    await simple.getByRole('button').click();
    await simple.locator('pre').getByText(/^200 /).waitFor();
    t.match(await simple.locator('pre').textContent(), /"effective_date"/, 'the answer is shown');
    t.same(
      sent,
      [{ url: `${gw.base}/fuel-api/api/simple-current.php`, key }],
      'the key in X-API-Key, not in the address',
    );

    await page.getByLabel('Your API key').fill('fpg_wrong');
    await simple.getByRole('button').click();
    await simple.locator('pre').getByText(/^401 /).waitFor();
    t.pass('a wrong key: 401 shown');

    const changes = page.locator('form.try[data-path="/fuel-api/api/changes.php"]');
    t.ok((await changes.locator('input').count()) > 0, 'an operation with parameters gets their fields');

    const kept = await page.evaluate(
      () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie,
    );
    t.notOk(kept.includes(key), 'not in storage');
    t.notOk(
      (await context.cookies()).some((c) => c.value.includes(key)),
      'nor in a cookie',
    );
    t.notOk(gw.logs().includes(key), 'nor in a log line');
    t.same(
      errors.filter((e) => !/401/.test(e)),
      [],
      'no script error or CSP refusal',
    );
  },
);
