// The portal's main flow in headless Chromium, against two `fuel-gateway serve` processes on one
// Redis as `npm start` runs them: no SMTP server, so the sign-in link is printed on the console.
// The webhook receiver is on loopback, which a portal endpoint reaches only with
// `portal.webhooks.allow_private_addresses`.
import t from 'tap';
import { launchChromium, newPage } from '../helpers/browser.js';
import { gatewayProcess, redisConfig } from '../helpers/cli.js';
import { startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { scaled, waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';

t.test(
  'in Chromium: sign up by the console link, the first key shown once calls the API and is seen on the usage; rotate with a 15-minute grace, both work, the old one revoked is refused on a second gateway within 1 s; a webhook endpoint added, its test delivery in the log, replayed',
  async (t) => {
    const redis = await startRedis(t);
    const config = redisConfig(
      { url: redis.url, key_prefix: `e2e${process.pid}:` },
      {
        webhooks: { allow_http: true, poll_interval_ms: 100 },
        portal: { webhooks: { allow_private_addresses: true } },
      },
    );
    const [one, two] = await Promise.all([gatewayProcess(t, config), gatewayProcess(t, config)]);
    const call = async (base: string, key: string): Promise<number> => {
      const r = await fetch(`${base}${SIMPLE}?api_key=${key}`);
      await r.arrayBuffer();
      return r.status;
    };
    const { page, errors } = await newPage(await launchChromium(t));

    await page.goto(`${one.base}/portal/`);
    await page.getByLabel('Email').fill('newcomer@example.test');
    await page.getByRole('button', { name: 'Email me a link' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    const [, link] = await one.waitFor(/portal sign-in link for newcomer@example\.test: (\S+)/, 5000);
    await page.goto(link as string);
    t.equal(new URL(page.url()).pathname, '/portal/', 'the link signs the newcomer up and in');
    const secret = (await page.locator('#first-key-secret').textContent()) ?? '';
    t.match(secret, /^fpg_/, 'the first key, shown');
    await page.reload();
    t.equal(await page.locator('#first-key-secret').count(), 0, 'shown once');
    t.notOk((await page.content()).includes(secret), 'nowhere on the page again');

    t.equal(await call(one.base, secret), 200, 'the first key calls simple-current.php');
    await waitFor(
      'the request on the usage section',
      async () => {
        await page.reload();
        return /\b1 of [\d,]+ requests used/.test((await page.locator('#usage').textContent()) ?? '');
      },
      5000,
    );
    t.pass('the request is seen on the usage');

    const rotateAction = (await page.locator('form[action$="/rotate"]').getAttribute('action')) ?? '';
    const oldId = rotateAction.split('/')[4] as string;
    const row = page.locator('tr', { has: page.locator(`form[action="${rotateAction}"]`) });
    await row.getByLabel('Grace').selectOption({ label: '15 min' });
    await row.getByRole('button', { name: 'Rotate' }).click();
    const rotated = (await page.locator('code').first().textContent()) ?? '';
    t.match(rotated, /^fpg_/, 'the new key, shown once');
    t.not(rotated, secret);
    t.same(
      [await call(one.base, secret), await call(one.base, rotated), await call(two.base, secret)],
      [200, 200, 200],
      'both keys work in the grace, on both gateways',
    );

    await page.goto(`${one.base}/portal/`);
    await page.locator(`form[action="/portal/api/keys/${oldId}/delete"] button`).click();
    await page.waitForURL(`${one.base}/portal/`);
    t.equal(await page.locator(`form[action="/portal/api/keys/${oldId}/delete"]`).count(), 0, 'gone from the list');
    const ms = await waitFor(
      'the old key refused on the second gateway',
      async () => (await call(two.base, secret)) === 401,
      1000,
    );
    t.pass(`refused on the second gateway after ${ms} ms (bound ${scaled(1000)} ms)`);
    t.equal(await call(two.base, rotated), 200, 'the new key works on');

    const receiver = await startReceiver(t);
    receiver.mode = { status: 200, body: 'taken <b>by the receiver</b>' };
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('URL').fill(`${receiver.url}/fleet-hooks`);
    await page.getByLabel('Description').fill('fleet ERP');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { name: 'Endpoint added' }).waitFor();
    const signing = (await page.locator('code').nth(1).textContent()) ?? '';
    t.match(signing, /^whsec_/, 'the signing secret, shown once');
    await page.goto(`${one.base}/portal/webhooks`);
    t.notOk((await page.content()).includes(signing), 'not shown again');
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await waitFor('the test event at the receiver', () => receiver.verified(signing).length === 1, 5000);
    const attempts = page.locator('tbody tr');
    await waitFor(
      'the test delivery in the log, answered 200',
      async () => {
        await page.goto(`${one.base}/portal/webhooks`);
        // The row's cells: state, attempted, status, ms, answer, error.
        return (await attempts.count()) === 1 && (await attempts.first().locator('td').nth(2).textContent()) === '200';
      },
      5000,
    );
    t.equal(
      await attempts.first().locator('td').nth(4).textContent(),
      'taken <b>by the receiver</b>',
      "the receiver's answer, shown as text",
    );
    await page.getByRole('button', { name: 'Replay' }).click();
    await waitFor('the replay at the receiver', () => receiver.verified(signing).length === 2, 5000);
    const [first, again] = receiver.verified(signing);
    t.equal(again?.headers['webhook-id'], first?.headers['webhook-id'], 'the same delivery, sent again');
    await waitFor(
      'the replay in the log: a second attempt',
      async () => {
        await page.goto(`${one.base}/portal/webhooks`);
        return (await attempts.count()) === 2;
      },
      5000,
    );
    t.pass('the replayed attempt is in the log');
    t.same(errors, [], 'no script error or CSP refusal');
  },
);
