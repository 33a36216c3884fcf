import { Agent, get } from 'node:http';
import t, { type Test } from 'tap';
import { type GatewayProcess, gatewayProcess, privateConfig } from '../helpers/cli.js';
import { scaled, sleep, waitFor } from '../helpers/wait.js';

// Its tests share nothing and spend most of their time waiting: they run 2 at a time.
t.jobs = 2;

const SIMPLE = '/fuel-api/api/simple-current.php';

const droppedMetric = async (admin: string): Promise<number> => {
  const text = await (await fetch(`${admin}/metrics`)).text();
  return Number(/^fuel_gateway_log_lines_dropped_total (\d+)$/m.exec(text)?.[1]);
};

interface Warning {
  time: number;
  dropped_lines: number;
}

const warnings = (gw: GatewayProcess): Warning[] =>
  (gw.output().match(/^\{.*"msg":"log output could not keep up.*$/gm) ?? []).map((l) => JSON.parse(l) as Warning);

/**
 * Loads a gateway whose stdout stops being read: from the start (`stallAt` 0) or mid-load, and
 * read again once the load is over or, mid-load, while it goes on.
 */
async function stalledStdout(t: Test, stallAt: number, resumeAt: number, atLeast: number): Promise<void> {
  const gw = await gatewayProcess(t, privateConfig({ demo_accounts: false, log: { max_buffer_bytes: 65536 } }));
  const created = await fetch(`${gw.admin}/admin/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'enterprise', limit: 1_000_000 }),
  });
  const key = ((await created.json()) as { api_key: string }).api_key;
  t.equal(await droppedMetric(gw.admin), 0, 'nothing dropped while stdout is read');
  const port = Number(new URL(gw.base).port);
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  t.teardown(() => agent.destroy());
  const statuses = new Map<number, number>();
  let sent = 0;
  let resumedAt = Number.POSITIVE_INFINITY;
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      get({ agent, host: '127.0.0.1', port, path: `${SIMPLE}?api_key=${key}` }, (res) => {
        statuses.set(res.statusCode as number, (statuses.get(res.statusCode as number) ?? 0) + 1);
        res.resume().on('end', resolve);
      }).on('error', reject);
    });
  // From the stall on, the pipe fills and stays full: a stalled log shipper.
  const step = (n: number): void => {
    if (n === stallAt) gw.child.stdout?.pause();
    if (n === resumeAt) {
      resumedAt = Date.now();
      gw.child.stdout?.resume();
    }
  };
  step(0);
  // About 1 MB of access log lines, many times the pipe and the buffer.
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let n = sent++; n < 4000; n = sent++) {
        step(n);
        await one();
      }
    }),
  );
  t.same([...statuses], [[200, 4000]], 'every request is answered while the log is stuck');
  if (resumeAt >= 4000) {
    // The lines still in the writer meet the full pipe within a flush (1 s): the count holds still
    // once they have. Seconds without a drop pass while stdout is still stuck: no warning may be
    // written for them, since it would wait behind the stuck lines or be dropped with them.
    let before = await droppedMetric(gw.admin);
    await waitFor(
      'the dropped count to hold still',
      async () => {
        await sleep(1500);
        const now = await droppedMetric(gw.admin);
        const still = now === before;
        before = now;
        return still;
      },
      15_000,
    );
    step(resumeAt);
  }
  const dropped = await droppedMetric(gw.admin);
  // Of about 900 KB of lines (450 KB mid-load), the pipe, the socket buffers and the 64 KiB
  // buffer hold about 300 KB.
  t.ok(dropped > atLeast, `${dropped} lines dropped and counted (more than ${atLeast})`);
  const sum = (): number => warnings(gw).reduce((n, w) => n + w.dropped_lines, 0);
  let metric = dropped;
  await waitFor(
    'the warnings to add up to the dropped-lines metric',
    async () => {
      metric = await droppedMetric(gw.admin);
      return sum() === metric;
    },
    15_000,
  ).catch(() => undefined);
  t.equal(sum(), metric, `the warnings (${warnings(gw).length}) say how many lines were lost: as many as counted`);
  t.ok(
    warnings(gw).every((w) => w.time >= resumedAt),
    'each warning was written once stdout flowed again, not while it was stuck',
  );
  const requestLines = (): number => (gw.output().match(/"msg":"request"/g) ?? []).length;
  const linesBefore = requestLines();
  await one();
  await waitFor('the access line of a request made now', () => requestLines() > linesBefore, 5000);
  t.pass('access lines are written again');
  t.equal(await gw.stop('SIGTERM'), 0, 'and SIGTERM still stops it cleanly');
}

t.test('a stdout that takes nothing costs log lines, not memory: counted, then reported once it flows', (t) =>
  stalledStdout(t, 0, 4000, 1000),
);

t.test('a stdout stalled mid-load and read again while the load goes on: the warnings add up to the count', (t) =>
  stalledStdout(t, 1000, 3000, 100),
);

/** SIGTERM, then the exit code and how long it took; null code if still running after `ms` (then killed on teardown). */
async function stopWithin(gw: GatewayProcess, ms: number): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  const exited = new Promise<number | null>((resolve) => gw.child.once('exit', (code) => resolve(code)));
  gw.child.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), ms))]);
  return { code, ms: Date.now() - started };
}

// The drain time is 1 s (min(1000, keep_alive_timeout_ms)); the rest leaves room for a loaded
// host (beside the bench, 5 s was not enough).
const EXIT_BOUND_MS = 1000 + scaled(3000);

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
