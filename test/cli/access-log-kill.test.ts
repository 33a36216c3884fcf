import { Agent, get } from 'node:http';
import t from 'tap';
import { FLUSH_MS } from '../../src/log/logging.js';
import { gatewayProcess, privateConfig } from '../helpers/cli.js';
import { scaled, waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';

interface Answered {
  id: string;
  at: number;
}

t.test(
  'a gateway killed with SIGKILL loses only access-log lines of the last flush period: every older answer is logged',
  async (t) => {
    const gw = await gatewayProcess(t, privateConfig({ demo_accounts: false }));
    const created = await fetch(`${gw.admin}/admin/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'enterprise', limit: 1_000_000 }),
    });
    const key = ((await created.json()) as { api_key: string }).api_key;
    const port = Number(new URL(gw.base).port);
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    t.teardown(() => agent.destroy());
    const answered: Answered[] = [];
    let killedAt = 0;
    const one = (): Promise<void> =>
      new Promise((resolve) => {
        get({ agent, host: '127.0.0.1', port, path: `${SIMPLE}?api_key=${key}` }, (res) => {
          const at = Date.now();
          res.resume().on('end', () => {
            if (killedAt === 0) answered.push({ id: res.headers['x-request-id'] as string, at });
            resolve();
          });
        }).on('error', () => resolve());
      });
    // Load from four connections until the kill, which comes mid-load (not just after a flush).
    const load = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (killedAt === 0) await one();
      }),
    );
    await waitFor(
      'a second and 200 answers',
      () => answered.length >= 200 && Date.now() - (answered[0] as Answered).at > 1000,
      scaled(10_000),
    );
    const exited = new Promise((resolve) => gw.child.once('exit', resolve));
    killedAt = Date.now();
    gw.child.kill('SIGKILL');
    await exited;
    await load;
    // The pipe's last bytes reach this process after the exit event.
    await new Promise((resolve) => setImmediate(resolve));

    const logged = new Set(
      (gw.output().match(/^\{"level":30.*"msg":"request"\}$/gm) ?? []).map(
        (l) => (JSON.parse(l) as { req_id: string }).req_id,
      ),
    );
    const lost = answered.filter((a) => !logged.has(a.id));
    const oldest = lost.reduce((max, a) => Math.max(max, killedAt - a.at), 0);
    t.comment(
      `${answered.length} answered, ${lost.length} lines lost (${answered.length - lost.length} logged); the oldest lost line was answered ${oldest} ms before the kill (flush period ${FLUSH_MS} ms)`,
    );
    const bound = scaled(FLUSH_MS);
    const late = lost.filter((a) => killedAt - a.at > bound);
    t.same(late, [], `every answer older than ${bound} ms (the flush period, scaled) has its line`);
    t.ok(lost.length < answered.length / 2, 'most lines were written before the kill');
  },
);

t.test('a quiet gateway writes an access-log line within the flush period, without waiting for more', async (t) => {
  const gw = await gatewayProcess(t, privateConfig({ demo_accounts: false }));
  const r = await fetch(`${gw.base}${SIMPLE}?api_key=fpg_live_not_a_key`);
  await r.arrayBuffer();
  const id = r.headers.get('x-request-id') as string;
  const took = await waitFor('the line', () => gw.output().includes(`"req_id":"${id}"`), scaled(FLUSH_MS) + 100);
  t.comment(`written ${took} ms after the answer`);
});
