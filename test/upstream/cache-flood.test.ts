/**
 * The pass-through cache under a flood of distinct query strings against one `fuel-gateway
 * serve` child: it holds at most max_bytes, and its RSS stays within max_bytes plus a stated
 * overhead. In the suite, 20,000 strings of 24 KiB answers (an unbounded cache would grow by 490
 * MiB, as with the 30,000 of 16 KiB it sent before, for two thirds of the requests: the suite is
 * CPU-bound and this file was its longest); `FLOOD_QUERIES=100000 FLOOD_PAD_BYTES=4096` is the 100,000-string
 * flood (about 100 s on a busy machine), whose figures docs/caching.md gives.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import t from 'tap';
import { cacheGateways } from '../helpers/cache.js';
import type { GatewayProcess } from '../helpers/cli.js';

/** The child's resident set (bytes), from /proc. */
function rss(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

const QUERIES = Number(process.env['FLOOD_QUERIES'] ?? 20_000);
const PAD = Number(process.env['FLOOD_PAD_BYTES'] ?? 24_576);
const WARM_UP = Math.min(5000, QUERIES / 10);
const MAX_BYTES = 8 << 20;
// What the process may grow by besides the cache under this load: garbage not yet collected
// (V8 lets the heap grow before a full collection; measured +60 to +100 MiB at 1,000 requests/s
// with 4 KiB answers), socket buffers, and the coverage hook tap runs children with. An
// unbounded cache would grow by QUERIES × (PAD + 0.5 KiB): 490 MiB in the suite, 440 MiB at 100,000 × 4 KiB.
// At load 14 the garbage reached +137 MiB, and +189 MiB with three test files at once (the
// collector runs later on a starved core). Still half of what an unbounded cache adds.
const OVERHEAD = 256 << 20;

// Beside the bench (load 12) the 20,000 requests took over tap's 240 s.
t.setTimeout(480_000);

t.test(`${QUERIES} distinct query strings keep the RSS within max_bytes plus a stated overhead`, async (t) => {
  const { origin, gws, key } = await cacheGateways(t, 1, { max_bytes: MAX_BYTES });
  const [gw] = gws as [GatewayProcess];
  const pid = gw.child.pid as number;
  origin.cacheable.padBytes = PAD;
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  t.teardown(() => agent.destroy());
  const port = Number(new URL(gw.base).port);
  let failures = 0;
  // What failed, so that a failure says whether the origin, the store or the socket did.
  const causes = new Map<string, number>();
  const failed = (cause: string): void => {
    failures++;
    causes.set(cause, (causes.get(cause) ?? 0) + 1);
  };
  const one = (i: number): Promise<void> =>
    new Promise((resolve) => {
      const req = request(
        { port, host: '127.0.0.1', agent, path: `/origin/cacheable/flood?q=${i}&api_key=${key}` },
        (res) => {
          if (res.statusCode !== 200) failed(String(res.statusCode));
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', (err) => {
        failed(err.message);
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
  await run(0, WARM_UP);
  const baseline = rss(pid);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 100);
  const start = Date.now();
  await run(WARM_UP, QUERIES);
  clearInterval(sampler);
  const seconds = (Date.now() - start) / 1000;
  const metrics = await (await fetch(`${gw.admin}/metrics`)).text();
  const held = Number(/^fuel_gateway_cache_bytes (\d+)/m.exec(metrics)?.[1]);
  const entries = Number(/^fuel_gateway_cache_entries (\d+)/m.exec(metrics)?.[1]);
  const mib = (n: number): string => (n / 1048576).toFixed(1);
  t.equal(failures, 0, `every request answered 200 ${JSON.stringify([...causes])}`);
  t.equal(origin.cacheableHits(), QUERIES, 'each distinct query string asked the origin once');
  t.ok(held <= MAX_BYTES, `cache holds ${mib(held)} MiB in ${entries} entries (max_bytes ${mib(MAX_BYTES)} MiB)`);
  t.ok(
    peak <= baseline + MAX_BYTES + OVERHEAD,
    `RSS ${mib(baseline)} MiB after warm-up, peak ${mib(peak)} MiB over ${QUERIES - WARM_UP} more in ${seconds.toFixed(1)} s ` +
      `(bound: + max_bytes ${mib(MAX_BYTES)} + overhead ${mib(OVERHEAD)} MiB; unbounded would hold ${mib(QUERIES * (PAD + 512))} MiB)`,
  );
});
