// Passkeys in headless Chromium with the DevTools protocol's virtual authenticator.
import t from 'tap';
import { launchChromium } from '../helpers/browser.js';
import { startGateway } from '../helpers/gateway.js';
import { assertion, pageWithAuthenticator } from '../helpers/passkeys.js';
import { askLink, follow } from '../helpers/portal.js';
import { freePort } from '../helpers/redis.js';
import { startSmtp } from '../helpers/smtp.js';

const smtp = await startSmtp(t);
const port = await freePort();
// WebAuthn takes a domain, not an address, as its relying party: the portal's base URL names one.
const base = `http://localhost:${port}`;
const gw = await startGateway(t, {
  listen: { public: { host: '127.0.0.1', port } },
  portal: { smtp: { url: smtp.url }, base_url: base },
  limits: { invalid_key_throttle: { max_attempts: 1000 } },
});
const browser = await launchChromium(t);
let seq = 0;

/** A new person signed in on a page that has an authenticator, with one passkey added there. */
async function withPasskey(name = 'laptop') {
  const email = `passkey${++seq}@example.test`;
  const a = await pageWithAuthenticator(browser);
  t.equal((await askLink(gw, email)).status, 202);
  await a.page.goto(await smtp.link(email));
  await a.page.getByLabel("New passkey's name").fill(name);
  await a.page.getByRole('button', { name: 'Add a passkey' }).click();
  await a.page.getByRole('cell', { name, exact: true }).waitFor();
  return { ...a, email };
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  gw.get(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const challenge = async (): Promise<string> =>
  ((await (await post('/portal/api/passkey-sign-in/options', {})).json()) as { challenge: string }).challenge;

t.test('a passkey added by a signed-in person signs them in later instead of an email link', async (t) => {
  const { page, email, credentials, errors } = await withPasskey();
  t.equal((await credentials()).length, 1, 'the authenticator holds one passkey');
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await page.getByText(`Signed in as ${email}`).waitFor();
  t.equal(new URL(page.url()).pathname, '/portal/');
  t.notMatch(await page.locator('section[aria-labelledby="passkeys"]').textContent(), /never/, 'its last use shown');
  t.equal(smtp.mails.filter((m) => m.to === email).length, 1, 'no second email');
  const list = await page.evaluate(async () => (await fetch('/portal/api/passkeys')).json());
  t.match(list, { passkeys: [{ name: 'laptop', last_used_at: String }] });
  await page.getByRole('button', { name: 'Remove passkey laptop' }).click();
  await page.getByText('No passkeys yet.').waitFor();
  t.pass('removed from the page, without script');
  const removed = await assertion(page, await challenge(), 'localhost');
  t.equal(
    (await post('/portal/api/passkey-sign-in', { response: removed })).status,
    400,
    'a removed passkey signs no one in',
  );
  t.same(errors, [], 'no script error or CSP refusal');
});

t.test('attacks: a replayed assertion, a challenge used twice, a credential of another person', async (t) => {
  const alice = await withPasskey('alice key');
  const bob = await withPasskey('<b>bob</b> key');
  t.match(await bob.page.content(), '&lt;b&gt;bob&lt;/b&gt; key', "a passkey's name is escaped on the page");
  const rpId = 'localhost';

  const first = await assertion(alice.page, await challenge(), rpId);
  const signedIn = await post('/portal/api/passkey-sign-in', { response: first });
  t.equal(signedIn.status, 200, 'a fresh assertion signs in');
  t.match(signedIn.headers.get('set-cookie'), /^fpg_session=fpg_sess_/);
  const replayed = await post('/portal/api/passkey-sign-in', { response: first });
  t.equal(replayed.status, 400, 'the same assertion again: refused');
  t.equal(replayed.headers.get('set-cookie'), null, 'and no cookie');

  const c = await challenge();
  t.equal((await post('/portal/api/passkey-sign-in', { response: await assertion(alice.page, c, rpId) })).status, 200);
  const again = await assertion(alice.page, c, rpId);
  t.equal(
    (await post('/portal/api/passkey-sign-in', { response: again })).status,
    400,
    'a challenge signed twice: once',
  );
  const unknown = await assertion(alice.page, 'Y2hhbGxlbmdlLW5vLW9uZS1nYXZl', rpId);
  t.equal((await post('/portal/api/passkey-sign-in', { response: unknown })).status, 400, 'a challenge never given');

  const [bobs] = (await (
    await bob.page.evaluate(() => fetch('/portal/api/passkeys').then((r) => r.json()))
  ).passkeys) as Array<{
    id: string;
  }>;
  const forged = await assertion(alice.page, await challenge(), rpId);
  const asBob = { ...forged, id: bobs?.id as string, rawId: bobs?.id as string };
  const refused = await post('/portal/api/passkey-sign-in', { response: asBob });
  t.equal(refused.status, 400, "alice's authenticator naming bob's credential: refused");
  t.equal(refused.headers.get('set-cookie'), null);

  const removal = await alice.page.evaluate(async (id) => {
    const me = (await (await fetch('/portal/api/me')).json()) as { csrf_token: string };
    const r = await fetch(`/portal/api/passkeys/${id}`, {
      method: 'DELETE',
      headers: { 'x-csrf-token': me.csrf_token },
    });
    return r.status;
  }, bobs?.id as string);
  t.equal(removal, 404, "alice removing bob's passkey by id: 404");
  t.equal((await bob.credentials()).length, 1);
  const bobStill = await assertion(bob.page, await challenge(), rpId);
  t.equal((await post('/portal/api/passkey-sign-in', { response: bobStill })).status, 200, "bob's passkey works on");

  const foreign = await post('/portal/api/passkey-sign-in/options', {}, { origin: 'https://evil.example' });
  t.equal(foreign.status, 403, 'a ceremony started from another origin');
  const noSession = await post('/portal/api/passkeys/options', {});
  t.equal(noSession.status, 401, 'adding one needs a session');

  const byPasskey = { cookie: (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string };
  t.equal((await gw.get('/portal/api/me', { headers: byPasskey })).status, 200, "the passkey's session");
  const everywhere = await alice.page.evaluate(async () => {
    const me = (await (await fetch('/portal/api/me')).json()) as { csrf_token: string };
    const r = await fetch('/portal/api/sign-out-everywhere', {
      method: 'POST',
      headers: { 'x-csrf-token': me.csrf_token },
    });
    return r.status;
  });
  t.equal(everywhere, 204, "sign out everywhere, from the link's session");
  t.equal((await gw.get('/portal/api/me', { headers: byPasskey })).status, 401, "ends the passkey's session too");
});

t.test(
  "a page opened at another address than the passkeys' (127.0.0.1) says where they work instead of offering them",
  async (t) => {
    const { page } = await pageWithAuthenticator(browser);
    await page.goto(`${gw.base}/portal/`);
    t.equal(await page.getByRole('button', { name: 'Sign in with a passkey' }).count(), 0, 'not offered at 127.0.0.1');
    await page.getByRole('link', { name: `${base}/portal/` }).click();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
    t.equal(page.url(), `${base}/portal/`, 'the link leads where they are offered');

    const email = 'elsewhere@example.test';
    t.equal((await askLink(gw, email)).status, 202);
    const { cookie } = await follow(await smtp.link(email));
    const home = await (await gw.get('/portal/', { headers: { cookie: cookie ?? '' } })).text();
    t.match(home, `Passkeys work only at <a href="${base}/portal/">`, "the home page's passkeys say where too");
    t.notMatch(home, 'id="passkey-add"', 'and offer no form that the browser would refuse');
  },
);

t.test(
  "behind a trusted proxy (whose Host may be its own) passkeys are offered: the browser's address is not known",
  async (t) => {
    const settings = (trusted: string[]) => ({
      portal: { smtp: { url: smtp.url }, base_url: 'https://portal.example' },
      server: { trusted_proxies: trusted },
    });
    const [proxied, direct] = [await startGateway(t, settings(['127.0.0.1'])), await startGateway(t, settings([]))];
    t.match(await (await proxied.get('/portal/')).text(), 'id="passkey-sign-in"');
    t.match(
      await (await direct.get('/portal/')).text(),
      'Passkeys work only at <a href="https://portal.example/portal/">',
    );
  },
);
