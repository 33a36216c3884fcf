import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { runCli, storeTimeouts } from '../helpers/cli.js';
import { startGateway } from '../helpers/gateway.js';

t.test('a purge with a mistyped parameter is refused, naming it, and purges nothing', async (t) => {
  const gw = await startGateway(t);
  const typo = await adminCall(gw, 'DELETE', '/admin/cache?pth=/v2');
  t.equal(typo.status, 400);
  t.match(typo.body.message, /pth/);
  t.match(typo.body.problems, [/pth/]);
  t.notMatch(gw.logs(), /cache purged|"action":"cache\.purge"/, 'nothing was purged or audited');
});

t.test('purging every entry takes an explicit all=true', async (t) => {
  const gw = await startGateway(t);
  const bare = await adminCall(gw, 'DELETE', '/admin/cache');
  t.equal(bare.status, 400, 'no parameter at all is not "purge everything"');
  t.match(bare.body.problems, [/all=true/]);
  t.equal((await adminCall(gw, 'DELETE', '/admin/cache?all=yes')).status, 400);
  t.equal((await adminCall(gw, 'DELETE', '/admin/cache?all=true&path=/v2')).status, 400, 'not both');
  const all = await adminCall(gw, 'DELETE', '/admin/cache?all=true');
  t.equal(all.status, 200);
  t.same(all.body, { purged: 'all' });
  const one = await adminCall(gw, 'DELETE', '/admin/cache?path=/v2/history.php');
  t.same(one.body, { purged: '/v2/history.php' });
});

t.test('cache purge from the CLI takes --all or --path, never neither', async (t) => {
  const { startRedis } = await import('../helpers/redis.js');
  const { writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const redis = await startRedis(t);
  const config = join(t.testdir(), 'redis.yaml');
  writeFileSync(config, JSON.stringify({ store: { type: 'redis', redis: { url: redis.url, ...storeTimeouts() } } }));
  const none = await runCli(['cache', 'purge', '--config', config]);
  t.equal(none.code, 2, 'no flag purges nothing: a usage error');
  t.match(none.stderr, /^cache purge: .*--all.*--path/, "the CLI's own options are named");
  t.notMatch(none.stderr, /all=true|path=P/, "not the admin API's query parameters");
  t.match(none.stderr, /^[^\n]+\n$/, 'one line');
  const both = await runCli(['cache', 'purge', '--all', '--path', '/v2', '--config', config]);
  t.equal(both.code, 2, 'both flags purge nothing');
  t.match(both.stderr, /^cache purge: .*--path.*--all.*not both/);
  t.notMatch(both.stderr, /all=true|path=P/);
  const all = await runCli(['cache', 'purge', '--all', '--config', config]);
  t.equal(all.code, 0, all.stderr);
  t.same(JSON.parse(all.stdout), { purged: 'all' });
});
