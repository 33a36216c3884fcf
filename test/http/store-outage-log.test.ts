import { Agent, get } from 'node:http';
import t from 'tap';
import { gatewayProcess, privateConfig } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
// The summary period (src/log/outage.ts).
const SUMMARY_MS = 10_000;

interface Line {
  level: number;
  time: number;
  msg: string;
  refused?: number;
  unmetered?: number;
}

t.test(
  'a Redis outage under load is logged once when it begins, then at most every 10 s with the answers it cost, and once when it ends',
  async (t) => {
    const redis = await startRedis(t);
    const gw = await gatewayProcess(
      t,
      privateConfig({
        demo_accounts: false,
        // Access lines off: what is left is the application log, which the outage must not flood.
        log: { access: false },
        store: { type: 'redis', redis: { url: redis.url, command_timeout_ms: 200 } },
      }),
    );
    const created = await fetch(`${gw.admin}/admin/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'enterprise', limit: 10_000_000 }),
    });
    const key = ((await created.json()) as { api_key: string }).api_key;
    const port = Number(new URL(gw.base).port);
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    t.teardown(() => agent.destroy());
    const statuses = new Map<number, number>();
    const count = (s: number): number => statuses.get(s) ?? 0;
    let loading = true;
    const one = (): Promise<void> =>
      new Promise((resolve) => {
        get({ agent, host: '127.0.0.1', port, path: `${SIMPLE}?api_key=${key}` }, (res) => {
          statuses.set(res.statusCode as number, count(res.statusCode as number) + 1);
          res.resume().on('end', resolve);
        }).on('error', () => resolve());
      });
    const workers = Array.from({ length: 8 }, async () => {
      while (loading) await one();
    });
    t.teardown(() => {
      loading = false;
    });
    await waitFor('answers under load', () => count(200) > 200, 30_000);

    await redis.stop();
    const stoppedAt = Date.now();
    await waitFor('503s while Redis is down', () => count(503) > 500, 30_000);
    // Long enough for one summary: the bound leaves a loaded machine room.
    await waitFor('a summary of the outage', () => /"msg":"store outage goes on"/.test(gw.output()), SUMMARY_MS * 3);
    await redis.start();
    // The restarted Redis is empty: the key is unknown now (401), and that answer is the store working.
    await waitFor('the end of the outage', () => /"msg":"store outage ended"/.test(gw.output()), 30_000);
    const outageMs = Date.now() - stoppedAt;
    await waitFor('answers from the store again', () => count(401) > 50, 30_000);
    loading = false;
    await Promise.all(workers);
    // Every line is written within a second (the log's flush); the stop flushes the rest.
    t.equal(await gw.stop('SIGTERM'), 0, 'SIGTERM stops it cleanly');

    // The whole log: on a loaded machine a store call may outlast the 200 ms timeout while Redis
    // runs, a short outage of its own (its 503s are the clients' too).
    const lines = gw
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
    const outage = lines.filter((l) => l.msg.startsWith('store outage'));
    const began = outage.filter((l) => l.msg.startsWith('store outage began'));
    const ended = outage.filter((l) => l.msg === 'store outage ended');
    t.equal(ended.length, began.length, `each of the ${began.length} outages logged has one end line`);
    // The outage under test: the one whose end line came after Redis was back. Its end line is
    // written a second or more after its `outage_ms` ends (log/outage.ts STORE_SETTLE_MS), so its began
    // line is the last one at least `outage_ms` before the end line.
    const last = ended.at(-1) as Line & { outage_ms: number };
    const opened = began.filter((l) => l.time <= last.time - last.outage_ms).at(-1);
    const span = outage.filter((l) => l.time >= (opened?.time ?? last.time) && l.time <= last.time);
    const summaries = span.filter((l) => l.msg === 'store outage goes on');
    t.ok(last.outage_ms >= SUMMARY_MS, `the outage under test lasted ${last.outage_ms} ms (Redis was down for more)`);
    t.equal(span.filter((l) => l.msg.startsWith('store outage began')).length, 1, 'one line when it begins');
    t.equal(span.filter((l) => l.msg === 'store outage ended').length, 1, 'one line when it ends');
    t.ok(
      summaries.length >= 1 && summaries.length <= Math.ceil(outageMs / SUMMARY_MS),
      `${summaries.length} summaries for ${outageMs} ms of outage (at most one per 10 s)`,
    );
    for (let i = 1; i < summaries.length; i++)
      t.ok((summaries[i] as Line).time - (summaries[i - 1] as Line).time >= SUMMARY_MS - 50, 'summaries 10 s apart');
    const refused = count(503);
    const logged = outage.reduce((n, l) => n + (l.refused ?? 0), 0);
    t.equal(logged, refused, `the summaries and end lines count every 503 the clients got (${refused})`);
    // Besides these, the webhook worker logs its outage (the same rule) and Redis its connection:
    // tens of lines, where a line per answer made thousands.
    const since = lines.filter((l) => l.time >= stoppedAt);
    const bound = 20 + Math.ceil(outageMs / 1000);
    t.ok(
      since.length < bound,
      `${since.length} log lines since Redis stopped (bound ${bound}) for ${refused} refused answers: ${[...new Set(since.map((l) => l.msg))].join(' | ')}`,
    );
  },
);

t.test(
  'the webhook worker logs a Redis outage once when it begins, at most every 10 s while it lasts, and once when it ends',
  async (t) => {
    const redis = await startRedis(t);
    const gw = await gatewayProcess(
      t,
      privateConfig({
        demo_accounts: false,
        log: { access: false },
        store: { type: 'redis', redis: { url: redis.url, command_timeout_ms: 200 } },
        webhooks: { poll_interval_ms: 100 },
      }),
    );
    const worker = (): Line[] =>
      gw
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{') && /"msg":"webhook delivery round/.test(l))
        .map((l) => JSON.parse(l) as Line);
    // On a loaded machine a round may outlast the 200 ms command timeout while Redis still runs:
    // such a blip is logged as an outage of its own, and may begin after any check made here.
    // The outage under test is what follows the last blip that ended before Redis stopped (a blip
    // still failing when Redis stops is the same outage, and its begin line is the one).
    const before = worker().length;
    let stoppedAt = Number.POSITIVE_INFINITY;
    const outage = (): Line[] => {
      const lines = worker().slice(before);
      let from = 0;
      lines.forEach((l, i) => {
        if (l.msg.includes('work again') && l.time < stoppedAt) from = i + 1;
      });
      return lines.slice(from);
    };
    await redis.stop();
    stoppedAt = Date.now();
    // Fixed: a summary after 10 s; unfixed: a line per failed round, tens by then.
    await waitFor(
      'a summary of the failing rounds, or a line per round',
      () => outage().some((l) => l.msg.includes('still failing')) || outage().length > 30,
      SUMMARY_MS * 3,
    );
    await redis.start();
    await waitFor('the end of the outage', () => outage().some((l) => l.msg.includes('work again')), 30_000);
    t.equal(await gw.stop('SIGTERM'), 0, 'SIGTERM stops it cleanly');
    const lines = outage();
    const outageMs = (lines.at(-1)?.time ?? 0) - (lines[0]?.time ?? 0);
    const bound = 2 + Math.ceil(outageMs / SUMMARY_MS);
    t.ok(lines.length <= bound, `${lines.length} worker lines for ${outageMs} ms of outage (bound ${bound})`);
    t.equal(lines.filter((l) => l.msg.includes('failing (')).length, 1, 'one line when the rounds begin to fail');
    t.equal(lines.filter((l) => l.msg.includes('work again')).length, 1, 'one line when they work again');
    const summaries = lines.filter((l) => l.msg.includes('still failing'));
    for (let i = 1; i < summaries.length; i++)
      t.ok((summaries[i] as Line).time - (summaries[i - 1] as Line).time >= SUMMARY_MS - 50, 'summaries 10 s apart');
  },
);
