import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { askLink, follow, signIn } from '../helpers/portal.js';
import { startRedis } from '../helpers/redis.js';
import { startSmtp } from '../helpers/smtp.js';

const SECRET = /<code id="first-key-secret">(fpg_[^<]+)<\/code>/;

t.test(
  'a new account gets its first key shown once on the first page after sign-in, and it calls the API; a returning member gets none',
  async (t) => {
    const redis = await startRedis(t);
    const smtp = await startSmtp(t);
    const prefix = `firstkey${process.pid}:`;
    const settings = {
      store: { type: 'redis', redis: { url: redis.url, key_prefix: prefix } },
      portal: { smtp: { url: smtp.url } },
    };
    const [one, two] = [await startGateway(t, settings), await startGateway(t, settings)];
    t.equal((await askLink(one, 'first@example.test')).status, 202);
    const followed = await follow(await smtp.link('first@example.test'));
    t.equal(followed.status, 303);
    const cookie = followed.cookie as string;
    // Another session of the same person, first to a page: the key is the first session's alone.
    t.equal((await askLink(one, 'first@example.test')).status, 202);
    const otherSession = (await follow(await smtp.link('first@example.test', 2))).cookie as string;
    const other = await (await two.get('/portal/', { headers: { cookie: otherSession } })).text();
    t.notMatch(other, SECRET, 'another session of the same person does not get it');
    const head = await two.get('/portal/', { method: 'HEAD', headers: { cookie } });
    t.equal(head.status, 200, 'a HEAD leaves it to the page');
    // The first page may be served by another gateway of the fleet.
    const first = await (await two.get('/portal/', { headers: { cookie } })).text();
    const secret = first.match(SECRET)?.[1];
    t.ok(secret, 'the first page shows the secret');
    const simple = await one.get(`/fuel-api/api/simple-current.php?api_key=${secret}`);
    t.equal(simple.status, 200, 'it is the account’s key');
    const values = await redis.cli('--scan', '--pattern', `${prefix}*`);
    for (const key of values.split('\n').filter((k) => k.includes('once:'))) {
      const raw = await redis.cli('GET', key);
      t.notOk(raw.includes(secret as string), `${key} holds it sealed, not readable`);
    }
    const again = await (await one.get('/portal/', { headers: { cookie } })).text();
    t.notMatch(again, SECRET, 'not shown again');
    t.notMatch(again, secret as string);
    const me = await fetch(`${one.base}/portal/api/keys`, { headers: { cookie } });
    t.equal(((await me.json()) as { keys: unknown[] }).keys.length, 1, 'its one key, not a second');
    const p = await signIn(one, smtp, 'first@example.test', 3);
    const returning = await (await one.get('/portal/', { headers: { cookie: p.cookie } })).text();
    t.notMatch(returning, SECRET, 'a member signing in again gets no key');
    t.notOk(one.logs().includes(secret as string) || two.logs().includes(secret as string), 'never in a log line');
  },
);
