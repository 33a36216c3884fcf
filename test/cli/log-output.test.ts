import { Agent, get } from 'node:http';
import t from 'tap';
import { type GatewayProcess, gatewayProcess, privateConfig } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';

const droppedMetric = async (admin: string): Promise<number> => {
  const text = await (await fetch(`${admin}/metrics`)).text();
  return Number(/^fuel_gateway_log_lines_dropped_total (\d+)$/m.exec(text)?.[1]);
};

t.test('a stdout that takes nothing costs log lines, not memory: counted, then reported once it flows', async (t) => {
  const gw = await gatewayProcess(t, privateConfig({ demo_accounts: false, log: { max_buffer_bytes: 65536 } }));
  const created = await fetch(`${gw.admin}/admin/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'enterprise', limit: 1_000_000 }),
  });
  const key = ((await created.json()) as { api_key: string }).api_key;
  t.equal(await droppedMetric(gw.admin), 0, 'nothing dropped while stdout is read');
  // From here the pipe fills (64 KiB) and stays full: a stalled log shipper.
  gw.child.stdout?.pause();
  const port = Number(new URL(gw.base).port);
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  t.teardown(() => agent.destroy());
  const statuses = new Map<number, number>();
  let sent = 0;
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      get({ agent, host: '127.0.0.1', port, path: `${SIMPLE}?api_key=${key}` }, (res) => {
        statuses.set(res.statusCode as number, (statuses.get(res.statusCode as number) ?? 0) + 1);
        res.resume().on('end', resolve);
      }).on('error', reject);
    });
  // About 1 MB of access log lines, many times the pipe and the buffer.
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (sent++ < 4000) await one();
    }),
  );
  t.same([...statuses], [[200, 4000]], 'every request is answered while the log is stuck');
  // The last lines wait in the writer up to a flush (1 s) before they meet the full pipe and are
  // dropped: the count is read once it holds still for longer than that.
  let dropped = await droppedMetric(gw.admin);
  await waitFor(
    'the dropped count to hold still',
    async () => {
      await new Promise((r) => setTimeout(r, 1500));
      const now = await droppedMetric(gw.admin);
      const still = now === dropped;
      dropped = now;
      return still;
    },
    15_000,
  );
  // Of about 900 KB of lines, the pipe, the socket buffers and the 64 KiB buffer hold about 300 KB.
  t.ok(dropped > 1000, `${dropped} lines dropped and counted`);
  gw.child.stdout?.resume();
  const [line] = await gw.waitFor(/^\{.*"msg":"log output could not keep up.*$/m, 10_000);
  t.equal(
    (JSON.parse(line) as { dropped_lines: number }).dropped_lines,
    dropped,
    'once stdout flows, one warning says how many lines were lost',
  );
  const requestLines = (): number => (gw.output().match(/"msg":"request"/g) ?? []).length;
  const before = requestLines();
  await one();
  await waitFor('the access line of a request made now', () => requestLines() > before, 5000);
  t.pass('access lines are written again');
  t.equal(await gw.stop('SIGTERM'), 0, 'and SIGTERM still stops it cleanly');
});

/** SIGTERM, then the exit code and how long it took; null code if still running after `ms` (then killed on teardown). */
async function stopWithin(gw: GatewayProcess, ms: number): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  const exited = new Promise<number | null>((resolve) => gw.child.once('exit', (code) => resolve(code)));
  gw.child.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), ms))]);
  return { code, ms: Date.now() - started };
}

// The drain time is 1 s (min(1000, keep_alive_timeout_ms)); 5 s leaves room for a loaded host.
const EXIT_BOUND_MS = 5000;

t.test('SIGTERM right after stdout’s reader is gone exits 0 within the drain time', async (t) => {
  const gw = await gatewayProcess(t, privateConfig({ demo_accounts: false }));
  // The parent closes its end of the child's stdout: the next write gets EPIPE. Nothing was
  // logged since, so the first write to fail is the one of the shutdown.
  gw.child.stdout?.destroy();
  const { code, ms } = await stopWithin(gw, EXIT_BOUND_MS);
  t.equal(code, 0, `exit code 0 (after ${ms} ms; bound ${EXIT_BOUND_MS} ms)`);
});

t.test(
  'with stdout’s reader gone, lines are dropped and counted, requests answered, and SIGTERM still stops it',
  async (t) => {
    const gw = await gatewayProcess(t, privateConfig({ demo_accounts: false }));
    gw.child.stdout?.destroy();
    const requests = 200;
    const statuses = new Set<number>();
    for (let i = 0; i < requests; i++) {
      const r = await fetch(`${gw.base}${SIMPLE}`, { headers: { connection: 'close' } });
      await r.arrayBuffer();
      statuses.add(r.status);
    }
    t.same([...statuses], [401], 'every request is answered (401: no key), each with an access line');
    // Written within a second (FLUSH_MS), refused, and counted.
    await waitFor(
      'the access lines counted as dropped',
      async () => (await droppedMetric(gw.admin)) >= requests,
      10_000,
    );
    t.pass(`${await droppedMetric(gw.admin)} lines dropped and counted (${requests} requests)`);
    t.equal((await fetch(`${gw.base}/healthz`)).status, 200, '/healthz still answers');
    const { code, ms } = await stopWithin(gw, EXIT_BOUND_MS);
    t.equal(code, 0, `exit code 0 (after ${ms} ms; bound ${EXIT_BOUND_MS} ms)`);
  },
);
