/**
 * The pass-through cache across real processes: two `fuel-gateway serve` children on one Redis;
 * a purge on one, or from the CLI, empties the other's within a second.
 */
import t from 'tap';
import { cacheGateways } from '../helpers/cache.js';
import { type GatewayProcess, runCli } from '../helpers/cli.js';
import { scaled, waitFor } from '../helpers/wait.js';

const xCache = async (gw: GatewayProcess, path: string, key: string): Promise<string | null> => {
  const r = await fetch(`${gw.base}${path}?api_key=${key}`);
  await r.arrayBuffer();
  return r.headers.get('x-cache');
};

t.test('a purge on one gateway, or from the CLI, empties the other gateway’s cache within a second', async (t) => {
  const { origin, gws, key, env } = await cacheGateways(t, 2);
  const [a, b] = gws as [GatewayProcess, GatewayProcess];
  for (const gw of gws) {
    t.equal(await xCache(gw, '/origin/cacheable/p', key), 'MISS');
    t.equal(await xCache(gw, '/origin/cacheable/p', key), 'HIT');
  }
  t.equal(origin.cacheableHits(), 2, 'one origin request per gateway');

  const purge = await fetch(`${a.admin}/admin/cache?all=true`, { method: 'DELETE' });
  t.equal(purge.status, 200);
  const took = await waitFor('b purged', async () => (await xCache(b, '/origin/cacheable/p', key)) === 'MISS', 1000);
  t.ok(took < scaled(1000), `the other gateway answered MISS ${took} ms after the purge on the first`);
  t.equal(await xCache(a, '/origin/cacheable/p', key), 'MISS', 'and the first purged its own');

  t.equal(await xCache(a, '/origin/cacheable/q', key), 'MISS');
  t.equal(await xCache(b, '/origin/cacheable/q', key), 'MISS');
  const cli = await runCli(['cache', 'purge', '--path', '/origin/cacheable/q'], env);
  t.equal(cli.code, 0, cli.stderr);
  t.same(JSON.parse(cli.stdout), { purged: '/origin/cacheable/q' });
  for (const gw of gws) {
    const ms = await waitFor(
      'purged by the CLI',
      async () => (await xCache(gw, '/origin/cacheable/q', key)) === 'MISS',
      1000,
    );
    t.ok(ms < scaled(1000), `cache purge --path reached a gateway in ${ms} ms`);
    t.equal(await xCache(gw, '/origin/cacheable/p', key), 'HIT', 'another path kept');
  }
  const bad = await runCli(['cache', 'purge', '--path', 'no-slash'], env);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /path/);
});
