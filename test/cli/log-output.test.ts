import { Agent, get } from 'node:http';
import t from 'tap';
import { gatewayProcess, privateConfig } from '../helpers/cli.js';
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
  const dropped = await droppedMetric(gw.admin);
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
