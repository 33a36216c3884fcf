/**
 * Counting a pass-through answer too large to read whole (over 4 MiB), which is streamed: a 2xx
 * the gateway has started to send stays counted when the client is the one that stops (it hangs
 * up, or reads too slowly to finish within upstream.timeout_ms); it is given back only when
 * nothing was written or the origin fails mid-answer. Real origin, raw client sockets.
 */
import t, { type Test } from 'tap';
import { newAccount } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { LARGE_ANSWER_BYTES, startOrigin } from '../helpers/origin.js';
import { downloadPart } from '../helpers/raw.js';
import { counted } from '../helpers/usage.js';
import { scaled, waitFor } from '../helpers/wait.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

// Long enough for an origin on a busy machine to start answering and send the whole large
// answer (beside the bench at load 10, 4.5 s was not: the gateway rightly took the origin for
// late; in a unit batch given a tenth of a core, 5.1 s of CPU in 52 s, 9 s did not pass the
// first 4 MiB); the slow-reader and stalled origin tests wait this long.
const TIMEOUT = scaled(8000);

async function setup(t: Test, upstream: Record<string, unknown> = {}): Promise<TestGateway> {
  const origin = await startOrigin(t);
  const gw = await startGateway(t, {
    upstream: {
      url: origin.url,
      api_key: origin.key,
      poll_interval_ms: 60_000,
      timeout_ms: TIMEOUT,
      proxy_paths: ['/origin/*'],
      ...upstream,
    },
  });
  await waitFor('first poll', async () => (await gw.get('/readyz')).status === 200);
  return gw;
}

async function account(gw: TestGateway, limit: number): Promise<{ key: string; id: string }> {
  const { api_key, account } = await newAccount(gw, { plan: 'starter', limit }, Date.now());
  return { key: api_key, id: account.id };
}

/**
 * The access-log statuses of the requests for `path` the gateway has finished with. A line is
 * written once the request is settled (counted or given back), so the store is read after it.
 */
function logged(gw: TestGateway, path: string): number[] {
  return gw
    .logs()
    .split('\n')
    .filter((l) => l.includes('"msg":"request"') && l.includes(`"url":"${path}?`))
    .map((l) => (JSON.parse(l) as { status: number }).status);
}

const get = (path: string, key: string): string =>
  `GET ${path}?api_key=${key} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`;

t.test(
  'a client that hangs up partway through a large answer is counted each time, and its limit refuses after it',
  async (t) => {
    // Only the client's hanging up ends these downloads, however slowly a busy machine streams.
    const gw = await setup(t, { timeout_ms: 120_000 });
    const { key, id } = await account(gw, 3);
    for (let i = 1; i <= 3; i++) {
      const d = await downloadPart(
        gw.app.publicAddress.port,
        get('/origin/large', key),
        LARGE_ANSWER_BYTES / 4,
        'hang-up',
      );
      t.match(d.head, /^HTTP\/1\.1 200 /, `download ${i}: a 200`);
      t.ok(
        d.bodyBytes >= LARGE_ANSWER_BYTES / 4 && d.bodyBytes < LARGE_ANSWER_BYTES,
        `download ${i}: the client hung up after ${d.bodyBytes} of ${LARGE_ANSWER_BYTES} bytes`,
      );
      await waitFor(`the gateway to finish with download ${i}`, () => logged(gw, '/origin/large').length === i);
      t.equal(logged(gw, '/origin/large')[i - 1], 200, `download ${i}: logged with the status sent`);
      t.equal(await counted(gw, id), i, `download ${i}: counted`);
    }
    const refused = await gw.get(`/origin/large?api_key=${key}`);
    t.equal(refused.status, 429, 'the limit of 3 refuses the fourth');
    await refused.body?.cancel();
  },
);

t.test('a client that stops reading a large answer is cut at upstream.timeout_ms and counted', async (t) => {
  // Without the cache, which would first read 4 MiB of each answer within the same timeout.
  const gw = await setup(t, { cache: { max_bytes: 0 } });
  const { key, id } = await account(gw, 1);
  const started = Date.now();
  // It stops at its first body bytes: a client that had read fast grows its receive buffer
  // (tcp_rmem here: up to 32 MiB), which could then hold the whole answer, and on a busy machine
  // the gateway had not passed it all on within the timeout: it held nothing the client had not taken, so
  // it rightly took the origin for late. Now a few MiB of the kernel's buffers fill at once.
  const d = await downloadPart(gw.app.publicAddress.port, get('/origin/large', key), 1, 'stop-reading');
  t.teardown(() => d.close());
  t.match(d.head, /^HTTP\/1\.1 200 /);
  await waitFor('the gateway to cut the slow reader', () => logged(gw, '/origin/large').length === 1);
  const ms = Date.now() - started;
  t.ok(ms >= TIMEOUT - 100, `cut after ${ms} ms (timeout ${TIMEOUT} ms)`);
  t.equal(logged(gw, '/origin/large')[0], 200, 'logged with the status sent');
  t.equal(await counted(gw, id), 1, 'counted');
  d.close();
  const refused = await gw.get(`/origin/large?api_key=${key}`);
  t.equal(refused.status, 429, 'the limit of 1 refuses the next');
  await refused.body?.cancel();
});

t.test('an origin that dies or stalls mid-answer leaves the request uncounted', async (t) => {
  // Without the cache, which would first read 4 MiB of each answer within the same timeout.
  const gw = await setup(t, { cache: { max_bytes: 0 } });
  const { key, id } = await account(gw, 1);
  for (const path of ['/origin/large-dies', '/origin/large-stalls']) {
    // The client reads all it is given: the origin is the one that stops.
    const d = await downloadPart(gw.app.publicAddress.port, get(path, key), Number.POSITIVE_INFINITY, 'hang-up');
    t.match(d.head, /^HTTP\/1\.1 200 /, `${path}: the head went out`);
    t.ok(d.closed && d.bodyBytes < LARGE_ANSWER_BYTES, `${path}: cut after ${d.bodyBytes} bytes`);
    await waitFor(`the gateway to finish with ${path}`, () => logged(gw, path).length === 1);
    t.equal(logged(gw, path)[0], 0, `${path}: logged as status 0, not counted`);
    t.equal(await counted(gw, id), 0, `${path}: given back`);
  }
  const next = await gw.get(`/origin/echo?api_key=${key}`);
  t.equal(next.status, 200, 'the allowance of 1 is still there');
  t.equal(((await next.json()) as { usage: { requests_used: number } }).usage.requests_used, 1);
});
