import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { askLink, follow, signIn } from '../helpers/portal.js';
import { startRedis } from '../helpers/redis.js';
import { startSmtp } from '../helpers/smtp.js';
import { waitFor } from '../helpers/wait.js';

t.test(
  'two gateways on one Redis: a session of one works on the other, and a key revoked in the portal is refused on the other within 1 s',
  async (t) => {
    const redis = await startRedis(t);
    const smtp = await startSmtp(t);
    const settings = {
      store: { type: 'redis', redis: { url: redis.url, key_prefix: `portal${process.pid}:` } },
      portal: { smtp: { url: smtp.url } },
    };
    const [one, two] = [await startGateway(t, settings), await startGateway(t, settings)];
    const p = await signIn(one, smtp, 'shared@example.test');
    const me = await two.get('/portal/api/me', { headers: { cookie: p.cookie } });
    t.equal(me.status, 200, 'the session is in the store, not in the gateway');
    const made = (await (await p.call('POST', '/portal/api/keys', { name: 'spare' })).json()) as {
      key: { id: string };
      api_key: string;
    };
    const simple = (key: string) => two.get(`/fuel-api/api/simple-current.php?api_key=${key}`).then((r) => r.status);
    t.equal(await simple(made.api_key), 200);
    t.equal((await p.call('DELETE', `/portal/api/keys/${made.key.id}`)).status, 204);
    const ms = await waitFor(
      'the revoked key refused on the other gateway',
      async () => (await simple(made.api_key)) === 401,
      1000,
    );
    t.pass(`refused after ${ms} ms`);
    t.equal((await p.call('POST', '/portal/api/sign-out')).status, 204);
    t.equal((await two.get('/portal/api/me', { headers: { cookie: p.cookie } })).status, 401, 'signed out on both');
  },
);

t.test(
  'Redis out of reach while people sign in and make keys: 503 (a page on a page, saying a link may be spent), no cookie, no key made',
  async (t) => {
    const redis = await startRedis(t);
    const smtp = await startSmtp(t);
    const gw = await startGateway(t, {
      store: { type: 'redis', redis: { url: redis.url, key_prefix: `down${process.pid}:`, command_timeout_ms: 300 } },
      portal: { smtp: { url: smtp.url } },
    });
    const p = await signIn(gw, smtp, 'owner@example.test');
    t.equal((await askLink(gw, 'newbie@example.test')).status, 202);
    const link = await smtp.link('newbie@example.test');
    const keys = async () => ((await (await p.call('GET', '/portal/api/keys')).json()) as { keys: unknown[] }).keys;
    const before = (await keys()).length;
    redis.pause();
    const made = await p.call('POST', '/portal/api/keys', { name: 'during' });
    t.equal(made.status, 503, 'a key asked for: 503');
    t.equal(made.headers.get('retry-after'), '1');
    t.match(made.headers.get('content-type'), /^application\/json/, 'the API answers JSON');
    const home = await gw.get('/portal/', { headers: { cookie: p.cookie } });
    t.equal(home.status, 503);
    t.match(home.headers.get('content-type'), /^text\/html/, 'a page answers a page');
    t.match(await home.text(), 'it may be used up: <a href="/portal/">ask for a new one</a>');
    const followed = await follow(link);
    t.same([followed.status, followed.cookie], [503, null], 'a link followed: 503, no cookie');
    redis.resume();
    await waitFor('the store back', async () => (await p.call('GET', '/portal/api/me')).status === 200, 5000);
    t.equal((await keys()).length, before, 'no key was made');
  },
);
