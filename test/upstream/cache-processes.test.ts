/**
 * The pass-through cache across real processes: two `fuel-gateway serve` children on one Redis
 * (a purge on one, or from the CLI, empties the other's within a second), and one child under a
 * flood of 100,000 distinct query strings (its RSS stays within max_bytes plus a stated overhead).
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import t, { type Test } from 'tap';
import { type GatewayProcess, gatewayProcess, privateConfig, runCli } from '../helpers/cli.js';
import { startOrigin, type TestOrigin } from '../helpers/origin.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

async function gateways(
  t: Test,
  n: number,
  cache: Record<string, unknown> = {},
): Promise<{ origin: TestOrigin; gws: GatewayProcess[]; key: string; env: NodeJS.ProcessEnv }> {
  const redis = await startRedis(t);
  const origin = await startOrigin(t);
  const env = { REDIS_URL: redis.url };
  const config = privateConfig({
    upstream: {
      url: origin.url,
      api_key: origin.key,
      poll_interval_ms: 60_000,
      timeout_ms: 5000,
      proxy_paths: ['/origin/*'],
      cache,
    },
    limits: { invalid_key_throttle: { max_attempts: 1000 } },
  });
  const gws = await Promise.all(Array.from({ length: n }, () => gatewayProcess(t, config, env)));
  for (const gw of gws) await waitFor('ready', async () => (await fetch(`${gw.base}/readyz`)).status === 200, 20_000);
  const created = await runCli(['accounts', 'create', '--plan', 'enterprise', '--limit', '10000000'], env);
  t.equal(created.code, 0, created.stderr);
  return { origin, gws, key: (JSON.parse(created.stdout) as { api_key: string }).api_key, env };
}

const xCache = async (gw: GatewayProcess, path: string, key: string): Promise<string | null> => {
  const r = await fetch(`${gw.base}${path}?api_key=${key}`);
  await r.arrayBuffer();
  return r.headers.get('x-cache');
};

t.test('a purge on one gateway, or from the CLI, empties the other gateway’s cache within a second', async (t) => {
  const { origin, gws, key, env } = await gateways(t, 2);
  const [a, b] = gws as [GatewayProcess, GatewayProcess];
  for (const gw of gws) {
    t.equal(await xCache(gw, '/origin/cacheable/p', key), 'MISS');
    t.equal(await xCache(gw, '/origin/cacheable/p', key), 'HIT');
  }
  t.equal(origin.cacheableHits(), 2, 'one origin request per gateway');

  const purge = await fetch(`${a.admin}/admin/cache`, { method: 'DELETE' });
  t.equal(purge.status, 200);
  const took = await waitFor('b purged', async () => (await xCache(b, '/origin/cacheable/p', key)) === 'MISS', 1000);
  t.ok(took < 1000, `the other gateway answered MISS ${took} ms after the purge on the first`);
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
    t.ok(ms < 1000, `cache purge --path reached a gateway in ${ms} ms`);
    t.equal(await xCache(gw, '/origin/cacheable/p', key), 'HIT', 'another path kept');
  }
  const bad = await runCli(['cache', 'purge', '--path', 'no-slash'], env);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /path/);
});

/** The child's resident set (bytes), from /proc. */
function rss(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

const MAX_BYTES = 8 << 20;
// What the process may grow by besides the cache: V8's heap headroom and garbage not yet
// collected, socket buffers, and the coverage hook tap runs children with.
const OVERHEAD = 48 << 20;

t.test('100,000 distinct query strings keep the RSS within max_bytes plus a stated overhead', async (t) => {
  const { origin, gws, key } = await gateways(t, 1, { max_bytes: MAX_BYTES });
  const [gw] = gws as [GatewayProcess];
  const pid = gw.child.pid as number;
  origin.cacheable.padBytes = 2048;
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  t.teardown(() => agent.destroy());
  const port = Number(new URL(gw.base).port);
  let failures = 0;
  const one = (i: number): Promise<void> =>
    new Promise((resolve) => {
      const req = request(
        { port, host: '127.0.0.1', agent, path: `/origin/cacheable/flood?q=${i}&api_key=${key}` },
        (res) => {
          if (res.statusCode !== 200) failures++;
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', () => {
        failures++;
        resolve();
      });
      req.end();
    });
  const run = async (from: number, to: number): Promise<void> => {
    let next = from;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < to) await one(next++);
      }),
    );
  };
  // Warm up, so the baseline holds what any busy gateway holds (compiled code, sockets, pools).
  await run(0, 5000);
  const baseline = rss(pid);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 100);
  const start = Date.now();
  await run(5000, 100_000);
  clearInterval(sampler);
  const seconds = (Date.now() - start) / 1000;
  const metrics = await (await fetch(`${gw.admin}/metrics`)).text();
  const held = Number(/^fuel_gateway_cache_bytes (\d+)/m.exec(metrics)?.[1]);
  const entries = Number(/^fuel_gateway_cache_entries (\d+)/m.exec(metrics)?.[1]);
  const mib = (n: number): string => (n / 1048576).toFixed(1);
  t.equal(failures, 0, 'every request answered 200');
  t.equal(origin.cacheableHits(), 100_000, 'each distinct query string asked the origin once');
  t.ok(held <= MAX_BYTES, `cache holds ${mib(held)} MiB in ${entries} entries (max_bytes ${mib(MAX_BYTES)} MiB)`);
  t.ok(
    peak <= baseline + MAX_BYTES + OVERHEAD,
    `RSS ${mib(baseline)} MiB after warm-up, peak ${mib(peak)} MiB over 95,000 more in ${seconds.toFixed(1)} s ` +
      `(bound: + max_bytes ${mib(MAX_BYTES)} + overhead ${mib(OVERHEAD)} MiB; unbounded would hold ${mib(100_000 * 2300)} MiB)`,
  );
});
