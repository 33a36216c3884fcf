import { request as httpRequest } from 'node:http';
import t, { type Test } from 'tap';
import { newAccount } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startOrigin, type TestOrigin } from '../helpers/origin.js';
import { rawRequest } from '../helpers/raw.js';
import { counted, ORIGIN_FAILED_OR_LIMIT, successesUntilRefused } from '../helpers/usage.js';
import { scaled, waitFor } from '../helpers/wait.js';

// The origin's answers must come within it on a busy machine too (at 500 ms, a unit batch beside
// the bench got 504 for /origin/echo); the slow origin takes four times as long.
const TIMEOUT = scaled(500);
const MAX_SOCKETS = 8;

async function setup(
  t: Test,
  gatewayOverrides: Record<string, unknown> = {},
  upstreamOverrides: Record<string, unknown> = {},
): Promise<{ origin: TestOrigin; gw: TestGateway; key: string; accountId: string }> {
  const origin = await startOrigin(t);
  const gw = await startGateway(t, {
    upstream: {
      url: origin.url,
      api_key: origin.key,
      poll_interval_ms: 60_000,
      timeout_ms: TIMEOUT,
      proxy_paths: ['/origin/*'],
      max_sockets: MAX_SOCKETS,
      ...upstreamOverrides,
    },
    limits: { invalid_key_throttle: { max_attempts: 1000 } },
    ...gatewayOverrides,
  });
  await waitFor('first poll', async () => (await gw.get('/readyz')).status === 200);
  const { api_key, account } = await newAccount(gw, { plan: 'starter' }, Date.now());
  return { origin, gw, key: api_key, accountId: account.id };
}

t.test('a JSON success gets the gateway usage as its last key; the client key never reaches the origin', async (t) => {
  // Without the cache: a request passed through as it came (the cache's shared requests carry no client's headers).
  const { origin, gw, key } = await setup(t, {}, { cache: { max_bytes: 0 } });
  const r = await gw.get(`/origin/echo?region=inland&api_key=${key}`, { headers: { 'x-forwarded-for': '6.6.6.6' } });
  t.equal(r.status, 200);
  const text = await r.text();
  t.equal(Number(r.headers.get('content-length')), Buffer.byteLength(text), 'Content-Length recomputed');
  const body = JSON.parse(text) as Record<string, any>;
  t.same(Object.keys(body), ['success', 'path', 'region', 'usage'], 'usage is the last key');
  t.equal(body.region, 'inland', 'other parameters are kept');
  t.equal(body.usage.plan_type, 'starter', "the gateway's usage replaced the origin's");
  t.equal(body.usage.requests_used, 1);
  t.equal(r.headers.get('x-ratelimit-limit'), '2000');
  t.equal(r.headers.get('cache-control'), 'no-store');

  const seen = origin.seen[origin.seen.length - 1];
  t.equal(seen?.path, '/origin/echo');
  t.same(seen?.query.getAll('api_key'), [origin.key], 'only the service key');
  t.notMatch(
    JSON.stringify([...(seen?.query ?? [])]) + JSON.stringify(seen?.headers),
    key,
    'the client key is nowhere in the forwarded request',
  );
  t.equal(
    seen?.headers['x-forwarded-for'],
    '127.0.0.1',
    "the origin sees the client's address, not what an untrusted client claimed",
  );
  t.equal(seen?.headers['x-forwarded-proto'], 'http');
  t.match(seen?.headers['x-forwarded-host'], /^127\.0\.0\.1:\d+$/);

  const viaHeader = await gw.get('/origin/echo', { headers: { 'x-api-key': key } });
  t.equal(viaHeader.status, 200);
  const last = origin.seen[origin.seen.length - 1];
  t.equal(last?.headers['x-api-key'], origin.key, 'a client X-API-Key is replaced by the service key');
  // FuelSA's clients send their key in a header named `key`: the origin never sees it.
  const viaKey = await gw.get(`/origin/echo?api_key=${key}`, { headers: { key } });
  t.equal(viaKey.status, 200);
  t.equal(origin.seen[origin.seen.length - 1]?.headers.key, undefined, "a client's `key` header is not passed on");
  t.notMatch(gw.logs(), origin.key, 'the service key is never logged');
});

t.test(
  'compressed JSON is decoded for the usage; other answers pass through untouched with rate headers',
  async (t) => {
    const { gw, key } = await setup(t);
    const gz = await gw.get(`/origin/gzip?api_key=${key}`);
    t.equal(gz.status, 200);
    t.equal(gz.headers.get('content-encoding'), null, 'served decoded');
    const body = (await gz.json()) as Record<string, any>;
    t.equal(body.compressed, true);
    t.equal(body.usage.plan_type, 'starter');

    const text = await gw.get(`/origin/text?api_key=${key}`);
    t.equal(await text.text(), 'plain text from the origin');
    t.equal(text.headers.get('content-type'), 'text/plain');
    t.equal(text.headers.get('x-ratelimit-remaining'), '1998');
    t.match(text.headers.get('ratelimit'), /^"period";r=1998;t=\d+$/, 'the draft fields pass through too');
    t.match(text.headers.get('ratelimit-policy'), /^"period";q=2000;w=\d+$/);
    t.equal(text.headers.get('set-cookie'), null, "the origin's session cookie (for the gateway's key) is dropped");
  },
);

t.test(
  'an invalid client key is refused without contacting the origin; a passed-through HEAD is counted',
  async (t) => {
    const { origin, gw, key, accountId } = await setup(t);
    const before = origin.seen.length;
    const bad = await gw.get('/origin/echo?api_key=fpg_not-a-key');
    t.equal(bad.status, 401);
    t.same(await bad.json(), { success: false, message: 'Invalid API key.' });
    const missing = await gw.get('/origin/echo');
    t.equal(missing.status, 401);
    t.equal(origin.seen.length, before, 'the origin saw nothing');

    const head = await gw.get(`/origin/echo?api_key=${key}`, { method: 'HEAD' });
    t.equal(head.status, 200);
    t.equal(await counted(gw, accountId), 1, 'a HEAD passed through costs the origin a request: it counts');
    const post = await gw.get(`/origin/echo?api_key=${key}`, { method: 'POST' });
    t.equal(post.status, 405);
  },
);

t.test('origin errors: 500 passes through, 502 and 504 within their bounds, none counted', async (t) => {
  const { origin, gw, key, accountId } = await setup(t);
  const specBody = await gw.get(`/origin/error500?api_key=${key}`);
  t.equal(specBody.status, 500);
  t.same(
    await specBody.json(),
    { success: false, message: 'Database unavailable.' },
    "the origin's error body, as it is the spec's",
  );
  const html = await gw.get(`/origin/error500html?api_key=${key}`);
  t.equal(html.status, 500);
  t.same(
    await html.json(),
    { success: false, message: 'Internal server error.', ref: html.headers.get('x-request-id') },
    'ours, with that status and the request id',
  );
  const notFound = await gw.get(`/origin/nothing-here?api_key=${key}`);
  t.equal(notFound.status, 404);

  origin.slowMs = TIMEOUT * 4;
  let start = Date.now();
  const slow = await gw.get(`/origin/slow?api_key=${key}`);
  const slowMs = Date.now() - start;
  t.equal(slow.status, 504);
  t.same(await slow.json(), {
    success: false,
    message: 'Upstream service timed out.',
    ref: slow.headers.get('x-request-id'),
  });
  t.ok(slowMs >= TIMEOUT - 20 && slowMs < TIMEOUT + scaled(300), `504 after ${slowMs} ms (timeout ${TIMEOUT} ms)`);

  origin.mode = 'ok';
  await origin.stop();
  start = Date.now();
  const down = await gw.get(`/origin/echo?api_key=${key}`);
  t.equal(down.status, 502);
  t.same(await down.json(), {
    success: false,
    message: 'Upstream service unavailable.',
    ref: down.headers.get('x-request-id'),
  });
  t.ok(Date.now() - start < scaled(TIMEOUT), `502 after ${Date.now() - start} ms`);

  await waitFor('refunds', async () => (await counted(gw, accountId)) === 0, 2000);
  t.pass('none of the failures is counted');
  await origin.start();
  const ok = (await (await gw.get(`/origin/echo?api_key=${key}`)).json()) as { usage: { requests_used: number } };
  t.equal(ok.usage.requests_used, 1, 'the next success is the first one counted');
  t.ok(
    (await gw.app.metrics.text()).includes(
      'fuel_gateway_upstream_requests_total{route="/origin/*",status="timeout"} 1',
    ),
    'metrics by outcome',
  );
});

t.test('a service key the origin refuses is a 502, not the client being told its key is invalid', async (t) => {
  const { origin, gw, key, accountId } = await setup(t);
  origin.key = 'rotated-at-the-origin';
  const r = await gw.get(`/origin/echo?api_key=${key}`);
  t.equal(r.status, 502);
  await waitFor('refund', async () => (await counted(gw, accountId)) === 0, 2000);
  t.match(gw.logs(), /the origin refused the service key/);
});

t.test('paths the origin would read as another path are refused before they are counted or forwarded', async (t) => {
  const { origin, gw, key, accountId } = await setup(t);
  const before = origin.seen.length;
  for (const path of [
    '/origin/../fuel-api/api/current.php',
    '/origin/%2e%2e/secret',
    '/origin/a%2Fb',
    '/origin/a\\b',
    '/origin/./echo',
  ]) {
    const answer = await rawRequest(
      gw.app.publicAddress.port,
      `GET ${path}?api_key=${key} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`,
    );
    t.match(answer, /^HTTP\/1\.1 400 /, `${path}: 400`);
  }
  t.equal(origin.seen.length, before, 'nothing reached the origin');
  t.equal(await counted(gw, accountId), 0);
});

t.test(
  'path-confusion forms (`..;`, double-encoded, overlong UTF-8, NUL, control and %u escapes) get 400: the origin is never asked, nothing counted',
  async (t) => {
    const { origin, gw, key, accountId } = await setup(t);
    const before = origin.seen.length;
    for (const path of [
      // Tomcat and Jetty read `..;` as `..`: the origin's own current.php with the service key.
      '/origin/..;/fuel-api/api/current.php',
      '/origin/a;jsessionid=1/echo',
      '/origin/..%3b/fuel-api/api/current.php',
      // Decoded twice by the origin (or a proxy in front of it), `%252e` is a dot.
      '/origin/%252e%252e%252ffuel-api/api/current.php',
      // Overlong UTF-8 for `.` and `/`, which lenient decoders read as the character.
      '/origin/%c0%ae%c0%ae/fuel-api/api/current.php',
      '/origin/%c0%ae%c0%ae%c0%affuel-api',
      '/origin/%e0%80%ae%e0%80%ae/fuel-api',
      '/origin/%ed%a0%80',
      // A NUL or another control ends or splits the path in C code; IIS reads `%u002e` as `.`.
      '/origin/..%00/fuel-api/api/current.php',
      '/origin/.%00./fuel-api/api/current.php',
      '/origin/..%09/fuel-api/api/current.php',
      '/origin/echo%0d%0aX-Injected:%201',
      '/origin/echo%7f',
      '/origin/echo%c2%85',
      '/origin/%u002e%u002e/fuel-api/api/current.php',
      '/origin/echo%',
      '/origin/echo%zz',
      // Fullwidth `．．／`: an origin that normalises Unicode (NFKC) reads `../`.
      '/origin/%ef%bc%8e%ef%bc%8e%ef%bc%8ffuel-api',
    ]) {
      const answer = await rawRequest(
        gw.app.publicAddress.port,
        `GET ${path}?api_key=${key} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`,
      );
      t.match(answer, /^HTTP\/1\.1 400 /, `${path}: 400`);
    }
    t.same(
      origin.seen.slice(before).map((r) => r.path),
      [],
      'nothing reached the origin',
    );
    t.equal(await counted(gw, accountId), 0, 'nothing counted');

    // Escapes that mean one thing everywhere still pass: an escaped letter, a UTF-8 character.
    for (const path of ['/origin/%65cho', '/origin/caf%C3%A9']) {
      const answer = await rawRequest(
        gw.app.publicAddress.port,
        `GET ${path}?api_key=${key} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`,
      );
      t.notMatch(answer, /^HTTP\/1\.1 400 /, `${path}: forwarded`);
    }
    t.equal(origin.seen.length - before, 2, 'the origin was asked for those two');
  },
);

t.test(
  'a request that fails at the origin never uses the allowance: exactly the limit of successes under concurrency',
  async (t) => {
    // Every request reaches the flaky origin: no cache, no coalescing.
    const { gw } = await setup(t, {}, { cache: { max_bytes: 0 } });
    const { api_key, account } = await newAccount(gw, { plan: 'developer' }, Date.now());
    const answers = await Promise.all(
      Array.from({ length: 300 }, async () => {
        const r = await gw.get(`/origin/flaky?api_key=${api_key}`);
        return { status: r.status, body: (await r.json()) as { usage?: { requests_used: number } } };
      }),
    );
    const ok = answers.filter((a) => a.status === 200);
    t.ok(ok.length <= 100, `${ok.length} successes, never more than the limit of 100`);
    t.ok(
      answers.every((a) => ORIGIN_FAILED_OR_LIMIT.includes(a.status)),
      'only successes, origin failures and the limit',
    );
    await waitFor('refunds to land', async () => (await counted(gw, account.id)) === ok.length, 2000);
    t.pass('the store counted exactly the successes');
    const total = ok.length + (await successesUntilRefused((k) => gw.get(`/origin/flaky?api_key=${k}`), api_key));
    t.equal(total, 100, `failures did not burn the allowance: ${ok.length} at once, ${total} in all`);
    t.equal(await counted(gw, account.id), 100);
  },
);

t.test('1,000 proxied requests reuse at most max_sockets origin connections and leave none open', async (t) => {
  // 100 requests at once wait for 8 sockets: on a loaded machine the last of them waited longer
  // than the 500 ms the other tests use, timed out (504), and each timeout cost a connection
  // (92 opened). This test is about reuse, so its origin deadline is far above any such wait.
  const { origin, gw } = await setup(t, {}, { timeout_ms: 20_000 });
  const { api_key } = await newAccount(gw, { plan: 'enterprise', limit: 100_000 }, Date.now());
  const connectionsBefore = origin.connections();
  // Keep-alive clients of our own, so the client side does not bound the concurrency.
  for (let round = 0; round < 10; round++) {
    const statuses = await Promise.all(
      Array.from(
        { length: 100 },
        () =>
          new Promise<number>((resolve, reject) => {
            const req = httpRequest(
              { host: '127.0.0.1', port: gw.app.publicAddress.port, path: `/origin/echo?api_key=${api_key}` },
              (res) => {
                res.resume();
                res.on('end', () => resolve(res.statusCode ?? 0));
              },
            );
            req.on('error', reject);
            req.end();
          }),
      ),
    );
    t.ok(
      statuses.every((s) => s === 200),
      `round ${round}: all 200`,
    );
  }
  const opened = origin.connections() - connectionsBefore;
  t.ok(opened <= MAX_SOCKETS, `${opened} origin connections for 1,000 requests (max_sockets ${MAX_SOCKETS})`);
  await gw.app.close();
  await waitFor('origin sockets to close', () => origin.openSockets() === 0, 3000);
  t.pass('no socket left open at the origin after close');
});

t.test('a client that leaves before the origin answers is not counted, and the gateway keeps serving', async (t) => {
  // The origin answers long after every client has left, even on a busy machine (had it answered
  // first, the answer would have been delivered, and rightly counted).
  const { origin, gw, key, accountId } = await setup(t, {}, { timeout_ms: 20_000 });
  origin.slowMs = scaled(1000);
  const port = gw.app.publicAddress.port;
  const { connect } = await import('node:net');
  for (let i = 0; i < 20; i++) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(`GET /origin/slow?api_key=${key} HTTP/1.1\r\nHost: a\r\n\r\n`);
    setTimeout(() => socket.destroy(), 100);
  }
  await waitFor('the origin asked for /origin/slow', () => origin.seen.some((s) => s.path === '/origin/slow'), 2000);
  t.pass('the origin was asked (those beyond max_sockets were dropped while queued)');
  await waitFor('refunds', async () => (await counted(gw, accountId)) === 0, 3000);
  t.pass('nothing counted for answers never delivered');
  const ok = await gw.get(`/origin/echo?api_key=${key}`);
  t.equal(ok.status, 200);
  t.equal(((await ok.json()) as { usage: { requests_used: number } }).usage.requests_used, 1);
});

t.test('a request body is refused, so it can never reach the origin as a smuggled request', async (t) => {
  const { origin, gw, key, accountId } = await setup(t);
  const before = origin.seen.length;
  const inner = `GET /origin/echo?smuggled=1 HTTP/1.1\r\nHost: o\r\n\r\n`;
  const chunked = `GET /origin/echo?api_key=${key} HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${inner.length.toString(16)}\r\n${inner}\r\n0\r\n\r\n`;
  t.match(await rawRequest(gw.app.publicAddress.port, chunked), /^HTTP\/1\.1 400 /);
  const sized = `GET /origin/echo?api_key=${key} HTTP/1.1\r\nHost: a\r\nContent-Length: ${inner.length}\r\nConnection: close\r\n\r\n${inner}`;
  t.match(await rawRequest(gw.app.publicAddress.port, sized), /^HTTP\/1\.1 400 /);
  t.equal(origin.seen.length, before, 'the origin saw nothing');
  t.equal(await counted(gw, accountId), 0);
});

t.test(
  'requests that time out while queued for an origin connection are never sent later; the pool recovers',
  async (t) => {
    const { origin, gw, key } = await setup(t);
    const hung = await Promise.all(
      Array.from({ length: 30 }, () => gw.get(`/origin/hang?api_key=${key}`).then((r) => r.status)),
    );
    t.ok(
      hung.every((s) => s === 504),
      'every one answered 504',
    );
    const start = Date.now();
    const ok = await gw.get(`/origin/echo?api_key=${key}`);
    t.equal(ok.status, 200, 'pass-through works again at once');
    t.ok(Date.now() - start < scaled(TIMEOUT));
    // A marker queued behind them: the pool sends in order, so once the origin has the marker,
    // a request still queued from before would have been sent.
    const sent = origin.seen.filter((s) => s.path === '/origin/hang').length;
    t.equal((await gw.get(`/origin/echo?api_key=${key}&marker=after-504s`)).status, 200);
    await waitFor(
      'the marker at the origin',
      () => origin.seen.some((s) => s.query.get('marker') === 'after-504s'),
      5000,
    );
    t.equal(
      origin.seen.filter((s) => s.path === '/origin/hang').length,
      sent,
      `no queued request was sent after its 504 (${sent} of 30 reached the origin)`,
    );
  },
);

t.test('an origin answer echoing the service key in a header or an error body is a 502, not counted', async (t) => {
  const { origin, gw, key, accountId } = await setup(t);
  const redirect = await gw.get(`/origin/redirect?api_key=${key}`, { redirect: 'manual' });
  t.equal(redirect.status, 502, 'a redirect whose Location echoes the forwarded URL is refused');
  t.equal(redirect.headers.get('location'), null);
  t.notMatch(JSON.stringify([...redirect.headers]) + (await redirect.text()), origin.key);
  const denied = await gw.get(`/origin/leak-error?api_key=${key}`);
  t.equal(denied.status, 502, 'so is an error body naming the key');
  const text = await denied.text();
  t.notMatch(text, origin.key);
  t.same(JSON.parse(text), {
    success: false,
    message: gw.config.messages.upstream_unavailable,
    ref: denied.headers.get('x-request-id'),
  });
  await waitFor('refunds', async () => (await counted(gw, accountId)) === 0, 2000);
  t.pass('neither is counted');
  t.notMatch(gw.logs(), origin.key, 'the key is not logged');
});

t.test(
  'a raw # in the request target is a 400 before anything is counted or forwarded, on every public path',
  async (t) => {
    const { origin, gw, key, accountId } = await setup(t);
    const before = origin.seen.length;
    const bad = JSON.stringify({ success: false, message: gw.config.messages.bad_request });
    for (const target of [
      `/origin/frag#x?a=1&api_key=${key}`,
      `/origin/echo?a=1#x&api_key=${key}`,
      `/origin/echo#?api_key=${key}`,
      `http://x/origin/echo#x?api_key=${key}`,
      `/fuel-api/api/current.php#x?api_key=${key}`,
      `/fuel-api/api/simple-current.php?api_key=${key}#x`,
      '/healthz#x',
    ]) {
      const answer = await rawRequest(
        gw.app.publicAddress.port,
        `GET ${target} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`,
      );
      t.match(answer, /^HTTP\/1\.1 400 /, `${target}: 400`);
      t.ok(answer.endsWith(`\r\n\r\n${bad}`), `${target}: the error table's bad_request body`);
    }
    t.equal(origin.seen.length, before, 'nothing reached the origin');
    t.equal(await counted(gw, accountId), 0, 'nothing was counted');
    t.notMatch(gw.logs(), /refused the service key/, 'no false alarm about the service key');
  },
);

t.test('an absolute-form request target is forwarded by its checked path, never glued to the origin URL', async (t) => {
  const { origin, gw, key } = await setup(t);
  const answer = await rawRequest(
    gw.app.publicAddress.port,
    `GET http://x/origin/echo?api_key=${key} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
  );
  t.match(answer, /^HTTP\/1\.1 200 /);
  t.equal(origin.seen[origin.seen.length - 1]?.path, '/origin/echo');
  t.notMatch(gw.logs(), origin.key);
});
