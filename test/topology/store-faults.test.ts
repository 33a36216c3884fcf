import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { serverName, serverStats } from '../../src/topology/haproxy.js';
import { load, SIMPLE, sleep, startTopology, until } from '../helpers/topology.js';

// Redis restarted, and one gateway cut off from it, while clients keep sending.
const run = promisify(execFile);
const topo = await startTopology(t);
const { ready } = topo;
const redisPort = new URL(ready.redis).port;
const redis = async (...args: string[]): Promise<string> =>
  (await run('redis-cli', ['-p', redisPort, ...args])).stdout.trim();
const readyz = async (port: number): Promise<number> =>
  (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })).status;

t.test(
  'Redis restarted (SIGTERM, append-only file) under load: counts kept, 503s not counted, service resumes by itself',
  async (t) => {
    const { id, key } = await topo.account('enterprise', 1_000_000);
    let stopLoad!: () => void;
    const until$ = new Promise<void>((r) => (stopLoad = r));
    const running = load(`${ready.public}${SIMPLE}`, key, 4, { until: until$, pauseMs: 5 });
    await until('the load to be counted', async () => (await topo.used(id)) > 50, 10_000);
    const pid = Number(/process_id:(\d+)/.exec(await redis('INFO', 'server'))?.[1]);
    const before = await topo.used(id);
    t.ok(before > 50, `counted before the restart: ${before}`);
    process.kill(pid, 'SIGTERM');
    await topo.waitEvent((e) => e['event'] === 'restarted' && e['name'] === 'redis', 15_000);
    // Resumed: a fresh request through the balancer is answered 200 again.
    const resumedMs = await until(
      'a request through the balancer is answered 200 again',
      async () => {
        const res = await fetch(`${ready.public}${SIMPLE}`, { headers: { 'x-api-key': key } });
        await res.arrayBuffer();
        return res.status === 200;
      },
      20_000,
    );
    // The load runs on a while after the resume: requests counted after it are the setup.
    await sleep(1000);
    stopLoad();
    const result = await running;
    const answered = result.ok() + 1; // the probe that saw the service back
    const refused = result.statuses.get(503) ?? 0;
    t.ok(refused > 0, `the outage was seen: ${refused} answers 503`);
    t.equal(result.errors, 0, 'every request was answered');
    t.same(
      [...result.statuses.keys()].filter((s) => s !== 200 && s !== 503),
      [],
      'only 200 and 503',
    );
    const counted = await topo.used(id);
    t.ok(counted >= before, `counts kept across the restart (${before} before, ${counted} after)`);
    // Redis writes a script's effect to its append-only file but may exit before writing the
    // reply (its last event-loop turn before a SIGTERM shutdown): that request is counted and its
    // client gets a 503. Only requests in flight at that moment can be, at most one a connection.
    t.ok(
      counted >= answered && counted <= answered + 4,
      `counted ${counted}: the answered 200s (${answered}), plus at most the 4 in flight at the shutdown; the other 503s (${refused}) not counted; resumed ${resumedMs} ms after the restart`,
    );
  },
);

t.test('an unready gateway (its Redis user shut out) is taken out of rotation, and put back once ready', async (t) => {
  const { key } = await topo.account('enterprise', 1_000_000);
  const victim = ready.gateways[1] as (typeof ready.gateways)[number];
  await redis('ACL', 'SETUSER', 'gateway-2', 'off');
  await redis('CLIENT', 'KILL', 'USER', 'gateway-2');
  t.teardown(() => redis('ACL', 'SETUSER', 'gateway-2', 'on'));
  const unreadyMs = await until('gateway-2 /readyz is 503', async () => (await readyz(victim.port)) === 503, 10_000);
  // HAProxy checks every 500 ms and takes a server out after two failures: 2 s is the bound.
  const lb = join(topo.stateDir, 'haproxy.sock');
  await until(
    'the balancer to take gateway-2 out',
    async () => {
      const status = (await serverStats(lb)).get(serverName(1))?.status ?? '';
      return status.startsWith('DOWN');
    },
    2000,
  );
  // Counted from gateway-2's own request counter, which moves as each answer is written: its access
  // log reaches its file up to a second later (later still under load), so a count of its lines
  // could miss requests it did serve.
  const served = await topo.served(1);
  const result = await load(`${ready.public}${SIMPLE}`, key, 4, { count: 200 });
  t.equal(result.ok(), 200, 'every request answered 200 by the other gateways');
  t.equal(await topo.served(1), served, 'gateway-2 got none of them');
  t.equal(await readyz(victim.port), 503, 'and was unready all along');

  await redis('ACL', 'SETUSER', 'gateway-2', 'on');
  const readyMs = await until(
    'gateway-2 /readyz is 200 again',
    async () => (await readyz(victim.port)) === 200,
    15_000,
  );
  const backMs = await until(
    'the balancer sends gateway-2 requests again',
    async () => {
      await load(`${ready.public}${SIMPLE}`, key, 2, { count: 20 });
      return (await topo.served(1)) > served;
    },
    5000,
  );
  t.pass(`unready ${unreadyMs} ms after the cut, ready ${readyMs} ms after, in rotation ${backMs} ms after that`);
});
