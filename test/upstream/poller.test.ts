import t, { type Test } from 'tap';
import { adminCall } from '../helpers/admin.js';
import { newAccount } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startOrigin, type TestOrigin } from '../helpers/origin.js';
import { scaled, sleep, waitFor } from '../helpers/wait.js';

const FULL = '/fuel-api/api/current.php';
const SIMPLE = '/fuel-api/api/simple-current.php';
const INTERVAL = 300;
// A poll's own time limit: scaled, so that a busy machine does not turn a good poll into a timeout.
const TIMEOUT = scaled(400);

interface Ready {
  ready: boolean;
  prices: boolean;
  upstream: {
    role: string;
    state: string;
    reason: string | null;
    last_success_at: string | null;
    snapshot_age_s: number | null;
    effective_date: string | null;
  };
}

function gatewayFor(t: Test, origin: TestOrigin, extra: Record<string, unknown> = {}): Promise<TestGateway> {
  return startGateway(t, {
    upstream: { url: origin.url, api_key: origin.key, poll_interval_ms: INTERVAL, timeout_ms: TIMEOUT, ...extra },
    // Without the page, whose rendering on each new set would share this process' event loop
    // with the clients timing how soon the set is served.
    page: { enabled: false },
  });
}

const ready = async (gw: TestGateway): Promise<{ status: number; body: Ready }> => {
  const r = await gw.get('/readyz');
  return { status: r.status, body: (await r.json()) as Ready };
};

const metric = async (gw: TestGateway, line: RegExp): Promise<number> => {
  const m = (await gw.app.metrics.text()).match(line);
  return m ? Number(m[1]) : 0;
};

const servedPrice = async (gw: TestGateway, key: string): Promise<string> => {
  const body = (await (await gw.get(`${SIMPLE}?api_key=${key}`)).json()) as {
    fuel_prices: { inland: { petrol_95: string } };
  };
  return body.fuel_prices.inland.petrol_95;
};

t.test("the origin's set is served with the gateway's own usage, and a change within one interval", async (t) => {
  const origin = await startOrigin(t);
  const gw = await gatewayFor(t, origin);
  await waitFor('first poll', async () => (await ready(gw)).status === 200);
  const { api_key } = await newAccount(gw, { plan: 'starter' }, Date.now());
  const r = await gw.get(`${FULL}?api_key=${api_key}`);
  t.equal(r.status, 200);
  const body = (await r.json()) as Record<string, any>;
  t.same(
    Object.keys(body),
    ['success', 'source', 'effective_date', 'updated_at', 'data', 'usage'],
    'the spec key order',
  );
  t.equal(body.source, 'Origin Fuel Service');
  t.equal(body.effective_date, '2026-11-04');
  t.equal(body.data.inland.petrol_95, '25.10');
  t.equal(body.usage.plan_type, 'starter', "the gateway's usage, not the origin's");
  t.equal(body.usage.requests_used, 1);
  t.equal(origin.seen[0]?.query.get('api_key'), origin.key, 'polls carry the service key');

  // Which poll brought the change is counted, not timed: the poll after the change is the bound,
  // whenever a busy machine lets it run. The time is stated with a scaled margin.
  let pollsAtAnnouncement: number | null = null;
  gw.app.store.coordination.subscribe((e) => {
    if (e.type === 'prices' && pollsAtAnnouncement === null) pollsAtAnnouncement = origin.polls();
  });
  origin.setPrice('25.55');
  const pollsAtChange = origin.polls();
  const servedMs = await waitFor('the new price', async () => (await servedPrice(gw, api_key)) === '25.55', 3000);
  t.equal(pollsAtAnnouncement, pollsAtChange + 1, 'the first poll after the change brought it');
  t.ok(
    servedMs <= scaled(INTERVAL + 250),
    `served ${servedMs} ms after the change (interval ${INTERVAL} ms, bound ${scaled(INTERVAL + 250)} ms)`,
  );

  // Hundreds of client requests cost the origin about one poll per interval, not one each.
  const pollsBefore = origin.polls();
  const start = Date.now();
  for (let i = 0; i < 6; i++) {
    await Promise.all(
      Array.from({ length: 50 }, () => gw.get(`${SIMPLE}?api_key=${api_key}`).then((x) => x.arrayBuffer())),
    );
    await sleep(INTERVAL); // requests spread over intervals: the passing time is the setup
  }
  const intervals = (Date.now() - start) / INTERVAL;
  const polls = origin.polls() - pollsBefore;
  t.ok(polls <= Math.ceil(intervals) + 1, `${polls} polls for 300 requests over ${intervals.toFixed(1)} intervals`);
});

t.test('an unchanged origin causes no rebuild and no announcement; a 304 is honoured', async (t) => {
  const origin = await startOrigin(t);
  const gw = await gatewayFor(t, origin);
  await waitFor('first poll', async () => (await ready(gw)).status === 200);
  const snapshot = gw.app.book.snapshot();
  let announcements = 0;
  gw.app.store.coordination.subscribe((e) => {
    if (e.type === 'prices') announcements++;
  });
  const polls = origin.polls();
  await waitFor('four more polls', () => origin.polls() >= polls + 4);
  t.equal(announcements, 0, 'no price announcement');
  t.equal(gw.app.book.snapshot(), snapshot, 'the same snapshot object: no rebuild');
  const later = origin.seen.filter((s) => s.path === FULL).slice(1);
  t.ok(
    later.every((s) => s.headers['if-none-match'] === '"v1"'),
    'later polls are conditional',
  );
  t.ok(
    (await metric(gw, /fuel_gateway_upstream_polls_total\{result="not_modified"\} (\d+)/)) >= 3,
    'counted as not_modified',
  );
});

t.test(
  'origin failures keep the last good snapshot, and /readyz, metrics and one log line per change tell it',
  async (t) => {
    const origin = await startOrigin(t);
    const gw = await gatewayFor(t, origin);
    await waitFor('first poll', async () => (await ready(gw)).status === 200);
    const { api_key } = await newAccount(gw, { plan: 'starter' }, Date.now());
    const cases: Array<[string, () => Promise<void> | void, string]> = [
      [
        'answers 500',
        () => {
          origin.mode = 'error500';
        },
        'bad_status',
      ],
      [
        'answers HTML',
        () => {
          origin.mode = 'html';
        },
        'not_json',
      ],
      [
        'answers the wrong shape',
        () => {
          origin.mode = 'wrong_shape';
        },
        'invalid',
      ],
      [
        'refuses the service key',
        () => {
          origin.mode = 'refuse_key';
        },
        'unauthorized',
      ],
      [
        'times out',
        () => {
          origin.slowMs = 2 * TIMEOUT;
          origin.mode = 'slow';
        },
        'timeout',
      ],
      ['is down', () => origin.stop(), 'unreachable'],
    ];
    for (const [what, breakIt, reason] of cases) {
      await breakIt();
      await waitFor(`readyz to report ${reason}`, async () => (await ready(gw)).body.upstream.reason === reason, 5000);
      const { status, body } = await ready(gw);
      t.equal(status, 200, `${what}: still ready, serving the last good set`);
      t.equal(body.upstream.state, 'failing', `${what}: state failing`);
      t.equal(await servedPrice(gw, api_key), '25.10', `${what}: the last good prices are served`);
      t.ok(
        (await metric(gw, new RegExp(`fuel_gateway_upstream_polls_total\\{result="${reason}"\\} (\\d+)`))) >= 1,
        `${what}: counted as ${reason}`,
      );
      origin.mode = 'ok';
      await origin.start();
      await waitFor(`recovery after: ${what}`, async () => (await ready(gw)).body.upstream.state === 'ok', 15_000);
    }
    const failed = gw
      .logs()
      .split('\n')
      .filter((l) => l.includes('polling the origin failed'));
    t.equal(failed.length, cases.length, 'one warning per change of state, not one per poll');
    t.equal(
      gw
        .logs()
        .split('\n')
        .filter((l) => l.includes('origin polled successfully')).length,
      cases.length + 1,
      'one line per recovery',
    );
    t.notMatch(gw.logs(), origin.key, 'the service key is never logged');
    const { body } = await ready(gw);
    t.equal(body.upstream.effective_date, '2026-11-04');
    t.ok(
      body.upstream.snapshot_age_s !== null && body.upstream.snapshot_age_s < 5,
      'snapshot age: seconds since the origin last confirmed it',
    );
    t.ok(
      (await metric(gw, /^fuel_gateway_upstream_last_success_timestamp_seconds (\S+)$/m)) > Date.now() / 1000 - 10,
      'last success metric',
    );
  },
);

t.test(
  'a fresh start against a dead origin answers 503 until the origin comes back; the shipped set is never current',
  async (t) => {
    const origin = await startOrigin(t);
    await origin.stop();
    const gw = await gatewayFor(t, origin);
    const { api_key } = await newAccount(gw, { plan: 'starter' }, Date.now());
    await waitFor('a failed poll', async () => (await ready(gw)).body.upstream.reason === 'unreachable');
    const r = await gw.get(`${SIMPLE}?api_key=${api_key}`);
    t.equal(r.status, 503, 'no current prices yet');
    t.ok(r.headers.get('retry-after'), 'with Retry-After');
    t.same(await r.json(), {
      success: false,
      message: 'Service temporarily unavailable.',
      ref: r.headers.get('x-request-id'),
    });
    const readiness = await ready(gw);
    t.equal(readiness.status, 503);
    t.equal(readiness.body.upstream.state, 'waiting');
    const hist = await gw.get(`/fuel-api/api/historical.php?api_key=${api_key}&month=9&year=2026`);
    t.equal(hist.status, 200, 'the shipped history still answers historical.php');

    await origin.start();
    await waitFor(
      'the first good poll',
      async () => (await gw.get(`${SIMPLE}?api_key=${api_key}`)).status === 200,
      5000,
    );
    t.equal(await servedPrice(gw, api_key), '25.10', "the origin's set, not the shipped 2026-09-02 one");
    const usage = (await (await gw.get(`${SIMPLE}?api_key=${api_key}`)).json()) as { usage: { requests_used: number } };
    t.equal(usage.usage.requests_used, 4, 'no 503 was counted: historical and three successes were');
  },
);

t.test('a set published by an operator in front of an origin goes to history, never current', async (t) => {
  const origin = await startOrigin(t);
  const gw = await gatewayFor(t, origin);
  await waitFor('first poll', async () => (await ready(gw)).status === 200);
  const current = gw.app.book.current()?.set;
  if (!current) throw new Error('no current set');
  const { origin: _dropped, ...local } = current;
  await gw.app.book.publish({ ...local, effective_date: '2026-11-10' });
  t.equal(gw.app.book.current()?.set.effective_date, '2026-11-04', 'the newer local set is not served as current');
});

t.test("an origin's set dated ahead of the gateway's clock is current in every view, never scheduled", async (t) => {
  // Days ahead of today, whatever day the suite runs: the set is served before its date.
  const ahead = (days: number): string => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
  const [soon, later] = [ahead(40), ahead(75)];
  const origin = await startOrigin(t);
  origin.setPrice('25.80', soon);
  const gw = await gatewayFor(t, origin);
  await waitFor('ready', async () => (await ready(gw)).status === 200, 5000);
  const { api_key } = await newAccount(gw, { plan: 'starter' }, Date.now());
  const dates = (sets: Array<{ effective_date: string }>): string[] => sets.map((s) => s.effective_date);
  const views = async (date: string) => {
    const [y, m] = date.split('-');
    const month = `${y}-${m}`;
    const get = async (path: string) => (await (await gw.get(`${path}&api_key=${api_key}`)).json()) as any;
    return {
      simple: (await get(`${SIMPLE}?`)).effective_date as string,
      prices: (await adminCall(gw, 'GET', '/admin/prices')).body,
      history: dates((await adminCall(gw, 'GET', '/admin/prices/history')).body.history),
      readyz: (await ready(gw)).body as unknown as { effective_date: string; age_days: number; stale: boolean },
      historical: dates((await get(`/fuel-api/api/historical.php?month=${Number(m)}&year=${y}`)).results),
      changes: (await get(`/fuel-api/api/changes.php?from=${month}&to=${month}`)).results,
      age: await metric(gw, /^fuel_gateway_price_snapshot_age_seconds (\S+)$/m),
    };
  };
  const first = await views(soon);
  t.equal(first.simple, soon, 'served as current');
  t.equal(first.prices.current.effective_date, soon, 'GET /admin/prices: current');
  t.same(dates(first.prices.scheduled), [], 'and not scheduled');
  t.equal(first.history.at(-1), soon, 'the newest of /admin/prices/history');
  t.match(first.readyz, { effective_date: soon, age_days: 0, stale: false }, '/readyz: its date, age 0 until then');
  t.equal(first.age, 0, 'the age metric is 0, not negative');
  t.same(first.historical, [soon], 'historical.php of its month has it');
  t.match(first.changes, [{ effective_date: soon, previous_effective_date: /^\d{4}-\d{2}-\d{2}$/ }], 'changes.php too');

  origin.setPrice('25.95', later);
  await waitFor('the later set', async () => (await ready(gw)).body.upstream.effective_date === later, 5000);
  const second = await views(later);
  t.same(dates(second.prices.scheduled), [], 'the set served before stays in the history, not scheduled');
  t.same(second.history.slice(-2), [soon, later]);
  t.match(second.changes, [{ effective_date: later, previous_effective_date: soon }]);
});

t.test('a failing origin is polled with exponential backoff, not once per interval', async (t) => {
  const origin = await startOrigin(t);
  const gw = await gatewayFor(t, origin);
  await waitFor('first poll', async () => (await ready(gw)).status === 200);
  origin.mode = 'error500';
  const before = origin.polls();
  await waitFor('four failed polls', () => origin.polls() >= before + 4, INTERVAL * 20);
  // The poll after each failure waits 300, 600, 1200 ms (each after the failure's answer, so a gap
  // between arrivals is never shorter, however busy the machine): not one interval each time.
  const at = origin.seen.filter((s) => s.path === FULL).map((s) => s.at);
  const gaps = at.slice(before + 1, before + 4).map((ms, i) => ms - (at[before + i] as number));
  const least = [INTERVAL, 2 * INTERVAL, 4 * INTERVAL];
  t.ok(
    least.every((ms, i) => (gaps[i] as number) >= ms - 5),
    `gaps after the 1st, 2nd and 3rd failure: ${gaps.join(', ')} ms, at least ${least.join(', ')}`,
  );
  origin.mode = 'ok';
  await waitFor('recovery', async () => (await ready(gw)).body.upstream.state === 'ok', INTERVAL * 12);
});
