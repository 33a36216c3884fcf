import t from 'tap';
import { runCli } from '../helpers/cli.js';

t.test('config check masks the credentials of every URL and every secret value, and nothing else', async (t) => {
  const r = await runCli(['config', 'check'], {
    UPSTREAM_URL: 'http://origin-user:origin-pass@origin.test:8000/base?api_key=query-secret&region=coastal',
    UPSTREAM_API_KEY: 'svc/Key+With=Odd&chars~0123',
    // A password with an "@" in it: the user info ends at the last one.
    REDIS_URL: 'redis://gateway:redis-p@ss@redis.test:6379/0',
    ADMIN_TOKEN: 'admin-token-value',
  });
  t.equal(r.code, 0, r.stderr);
  for (const secret of ['origin-user', 'origin-pass', 'query-secret', 'svc/Key', 'redis-p', 'ss@redis', 'admin-token'])
    t.notOk(r.stdout.includes(secret), `${secret} is not printed`);
  const printed = JSON.parse(r.stdout) as {
    upstream: { url: string; api_key: string };
    store: { redis: { url: string } };
    listen: { admin: { token: string } };
  };
  t.equal(
    printed.upstream.url,
    'http://***@origin.test:8000/base?api_key=***&region=coastal',
    'host, path and other parameters stay',
  );
  t.equal(printed.upstream.api_key, '***');
  t.equal(printed.store.redis.url, 'redis://***@redis.test:6379/0');
  t.equal(printed.listen.admin.token, '***');

  const plain = await runCli(['config', 'check'], { UPSTREAM_URL: 'https://origin.test/v2?region=inland' });
  t.equal(plain.code, 1, 'a URL without a key still needs upstream.api_key');
  const unset = await runCli(['config', 'check']);
  t.equal(unset.code, 0, unset.stderr);
  t.match(
    JSON.parse(unset.stdout),
    { upstream: { url: '', api_key: '' }, listen: { admin: { token: '' } } },
    'empty stays empty',
  );
});
