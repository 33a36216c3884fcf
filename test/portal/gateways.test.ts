import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { signIn } from '../helpers/portal.js';
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
