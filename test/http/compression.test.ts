import { request } from 'node:http';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync } from 'node:zlib';
import pino from 'pino';
import t from 'tap';
import { PublicPage } from '../../src/features/page/page.js';
import { negotiate } from '../../src/http/encoding.js';
import type { OpenApiDocument } from '../../src/http/openapi.js';
import { buildSnapshot } from '../../src/prices/snapshot.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { priceSet } from '../helpers/prices.js';
import { rawRequest } from '../helpers/raw.js';
import { scaled, waitFor } from '../helpers/wait.js';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request through node:http, which (unlike fetch) hands over the bytes as sent. */
function raw(gw: TestGateway, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${gw.base}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const decode = (r: Raw): Buffer => {
  const coding = r.headers['content-encoding'];
  return coding === 'gzip' ? gunzipSync(r.body) : coding === 'br' ? brotliDecompressSync(r.body) : r.body;
};

t.test('Accept-Encoding: q-values, *, identity;q=0, ties going br then gzip', async (t) => {
  const cases: Array<[string | undefined, string]> = [
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['x-gzip', 'gzip'],
    ['gzip, deflate, br', 'br'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['br;q=0, gzip;q=0.1', 'gzip'],
    ['*', 'br'],
    ['br;q=0, *', 'gzip'],
    ['*;q=0', 'identity'],
    ['identity;q=0', 'identity'],
    ['identity;q=0, gzip;q=0.2', 'gzip'],
    ['identity;q=0, *;q=0.5', 'br'],
    ['identity, gzip;q=0.5', 'identity'],
    ['gzip;q=0', 'identity'],
    ['gzip;q=abc', 'identity'],
    ['gzip;q=0.0001', 'identity'],
    ['deflate', 'identity'],
    ['gzip ; q=0.8 , br ; q=0.9', 'br'],
    [',,gzip,,', 'gzip'],
  ];
  for (const [value, want] of cases) t.equal(negotiate(value, true, true), want, JSON.stringify(value));
  t.equal(negotiate('br', false, true), 'identity', 'br not on offer');
  t.equal(negotiate('*', false, true), 'gzip');
});

t.test(
  "the page's first answer is not held up by its compression: uncompressed with Vary at once, compressed once made",
  async (t) => {
    const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
    // The page and a health check at once: the health check must not wait for the page's brotli.
    const sent = Date.now();
    const [first, health] = await Promise.all([
      raw(gw, '/', { 'Accept-Encoding': 'br, gzip' }),
      raw(gw, '/healthz').then((r) => ({ ...r, ms: Date.now() - sent })),
    ]);
    t.equal(first.status, 200);
    t.equal(first.headers.vary, 'Accept-Encoding', 'says it varies, compressed or not yet');
    t.equal(Number(first.headers['content-length']), first.body.length);
    t.equal(health.status, 200);
    t.ok(health.ms < scaled(500), `a health check beside the first render answered in ${health.ms} ms`);
    const compressedMs = await waitFor('the page compressed off the request', async () => {
      const r = await raw(gw, '/', { 'Accept-Encoding': 'br' });
      return r.headers['content-encoding'] === 'br' && decode(r).equals(decode(first));
    });
    t.pass(`compressed ${compressedMs} ms after the first answer`);
  },
);

/** Waits for the log to tell that `n` pages have been compressed. */
const compressed = (gw: TestGateway, n: number) =>
  waitFor(`${n} page(s) compressed`, () => gw.logs().split('public page compressed').length > n);

t.test(
  'the page is compressed as its price set comes into effect, at start and on each new set, before any request',
  async (t) => {
    const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
    await compressed(gw, 1);
    const first = await raw(gw, '/', { 'Accept-Encoding': 'br' });
    t.equal(first.headers['content-encoding'], 'br', 'the first request of / gets the brotli made at start');
    await gw.app.book.publish({ ...priceSet('2026-11-18', '31.23'), updated_at: '2026-11-17 10:00:00' });
    await compressed(gw, 2);
    const after = await raw(gw, '/', { 'Accept-Encoding': 'br' });
    t.equal(
      after.headers['content-encoding'],
      'br',
      "the new set's first request gets the brotli made when it came into effect",
    );
    t.match(decode(after).toString(), '31.23', 'of the new prices');
    t.not(after.headers.etag, first.headers.etag);
  },
);

t.test('the document, the page and its assets come compressed as asked, with Vary and the right length', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  await compressed(gw, 1);
  for (const path of ['/fuel-api/openapi.json', '/', '/assets/page.js', '/assets/page.css']) {
    const plain = await raw(gw, path);
    t.equal(plain.headers['content-encoding'], undefined, `${path}: none asked, none sent`);
    t.equal(plain.headers.vary, 'Accept-Encoding');
    for (const coding of ['gzip', 'br']) {
      const r = await raw(gw, path, { 'Accept-Encoding': coding });
      t.equal(r.status, 200);
      t.equal(r.headers['content-encoding'], coding, `${path} ${coding}`);
      t.equal(r.headers.vary, 'Accept-Encoding');
      t.equal(Number(r.headers['content-length']), r.body.length, 'Content-Length of the coded bytes');
      t.ok(r.body.length < plain.body.length, `${path} ${coding}: ${plain.body.length} → ${r.body.length} bytes`);
      t.same(decode(r), plain.body, 'decodes to the same bytes');
      const head = await raw(gw, path, { 'Accept-Encoding': coding }, 'HEAD');
      t.equal(head.body.length, 0);
      t.equal(head.headers['content-length'], r.headers['content-length'], 'HEAD: the same headers');
      t.equal(head.headers['content-encoding'], coding);
    }
    const etag = plain.headers.etag as string | undefined;
    if (etag) {
      const nm = await raw(gw, path, { 'Accept-Encoding': 'gzip', 'If-None-Match': etag });
      t.equal(nm.status, 304);
      t.equal(nm.headers.vary, 'Accept-Encoding', 'a 304 says Vary too');
    }
  }
  const icon = await raw(gw, '/assets/favicon.svg', { 'Accept-Encoding': 'gzip' });
  t.equal(icon.headers['content-encoding'], undefined, 'under 1 KiB: as it is');
  t.equal(icon.headers.vary, undefined);
  const fetched = await gw.get('/fuel-api/openapi.json', { headers: { 'Accept-Encoding': 'br' } });
  t.equal(((await fetched.json()) as { openapi: string }).openapi, '3.1.0', 'a real client reads it');
});

t.test(
  'historical and changes answers over 1 KiB come compressed; current prices and small answers never',
  async (t) => {
    const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
    const key = { 'X-API-Key': gw.app.demoKeys['business'] as string };
    const range = '/fuel-api/api/historical.php?from=2017-01&to=2026-12';
    const plain = await raw(gw, range, key);
    for (const coding of ['gzip', 'br']) {
      const r = await raw(gw, range, { ...key, 'Accept-Encoding': `${coding}, identity;q=0.5` });
      t.equal(r.headers['content-encoding'], coding);
      t.equal(r.headers.vary, 'Accept-Encoding');
      t.equal(Number(r.headers['content-length']), r.body.length);
      t.same(decode(r), plain.body, `${range} ${coding}: ${plain.body.length} → ${r.body.length}`);
      t.ok(r.headers['x-ratelimit-remaining'], 'rate headers');
    }
    const csv = await raw(gw, `${range}&format=csv`, { ...key, 'Accept-Encoding': 'gzip' });
    t.equal(csv.headers['content-type'], 'text/csv; charset=utf-8');
    t.match(decode(csv).toString(), /^effective_date,region,/);

    const changes = '/fuel-api/api/changes.php?from=2024-01&to=2025-12';
    const before = await raw(gw, changes, key);
    const gz = await raw(gw, changes, { ...key, 'Accept-Encoding': 'gzip, br' });
    t.equal(gz.headers['content-encoding'], 'gzip', 'changes JSON carries usage: gzip only');
    t.equal(Number(gz.headers['content-length']), gz.body.length);
    const a = JSON.parse(before.body.toString()) as { usage: { requests_used: number }; results: unknown[] };
    const b = JSON.parse(decode(gz).toString()) as { usage: { requests_used: number }; results: unknown[] };
    t.same(b.results, a.results);
    t.equal(b.usage.requests_used, a.usage.requests_used + 1, 'the usage of its own request');
    t.ok(gz.body.length < before.body.length / 2, `${before.body.length} → ${gz.body.length} bytes`);
    const viaFetch = (await (await gw.get(changes, { headers: { ...key, 'Accept-Encoding': 'gzip' } })).json()) as {
      usage: { requests_used: number };
    };
    t.equal(viaFetch.usage.requests_used, a.usage.requests_used + 2, 'a real client decodes it');

    for (const path of [
      '/fuel-api/api/simple-current.php',
      '/fuel-api/api/current.php',
      '/fuel-api/api/historical.php?month=5&year=2025',
      '/fuel-api/api/usage.php',
    ]) {
      const r = await raw(gw, path, { ...key, 'Accept-Encoding': 'gzip, br' });
      t.equal(r.status, 200, path);
      t.equal(r.headers['content-encoding'], undefined, `${path}: as it is`);
      t.equal(r.headers.vary, undefined);
    }
  },
);

t.test('from a raw socket: repeated and odd Accept-Encoding fields, HEAD', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const port = gw.app.publicAddress.port;
  const ask = (lines: string[], method = 'GET'): Promise<string> =>
    rawRequest(
      port,
      `${method} /fuel-api/openapi.json HTTP/1.1\r\nHost: x\r\n${lines.map((l) => `${l}\r\n`).join('')}Connection: close\r\n\r\n`,
    );
  const coding = (answer: string): string | undefined => /\r\ncontent-encoding: ([^\r]+)/i.exec(answer)?.[1];
  t.equal(coding(await ask(['Accept-Encoding: identity;q=0', 'Accept-Encoding: gzip'])), 'gzip', 'fields joined');
  t.equal(coding(await ask(['Accept-Encoding: br;q=0.5', 'accept-encoding: gzip;q=0.9'])), 'gzip');
  for (const odd of [
    'Accept-Encoding: ;;;,,,',
    'Accept-Encoding: gzip;q=',
    `Accept-Encoding: ${'x,'.repeat(2000)}`,
    'Accept-Encoding: ÿ',
  ]) {
    const answer = await ask([odd]);
    t.match(answer, /^HTTP\/1\.1 200 /, odd.slice(0, 30));
    t.equal(coding(answer), undefined);
  }
  const head = await ask(['Accept-Encoding: br'], 'HEAD');
  t.equal(coding(head), 'br');
  t.ok(head.endsWith('\r\n\r\n'), 'HEAD: no body');
  t.match(head, /\r\ncontent-length: \d+\r\n/i);
});

t.test(
  "the page's fast bytes come at once, its most compressed (brotli 10) once its set has been in effect a while, and stay",
  async (t) => {
    const lines: string[] = [];
    const bestAfterMs = scaled(400);
    const document = () => ({ info: { description: 'The API.' }, paths: {} }) as unknown as OpenApiDocument;
    const page = new PublicPage({
      document,
      zone: 'Africa/Johannesburg',
      maxAgeDays: 60,
      log: pino({ level: 'info' }, { write: (l: string) => void lines.push(l) }),
      bestAfterMs,
    });
    const set = { ...priceSet('2026-11-04', '21.87'), updated_at: '2026-11-03 12:00:00' };
    const snap = buildSnapshot([set], { set, effectiveMs: NOW }, 'DMRE');
    const prepared = Date.now();
    page.prepare(snap, NOW);
    const br = () => page.render(snap, '"fresh"').br?.body ?? null;
    await waitFor('the fast bytes', () => br() !== null, scaled(5000));
    const fast = br() as Buffer;
    const html = page.render(snap, '"fresh"').identity.body;
    t.same(brotliDecompressSync(fast), html, 'the fast bytes are the page');
    t.ok(Date.now() - prepared < bestAfterMs, 'the fast bytes come before the best are due');
    await waitFor('the most compressed bytes', () => (br()?.length ?? 0) < fast.length, bestAfterMs + scaled(10_000));
    const q10 = brotliCompressSync(html, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 10, [constants.BROTLI_PARAM_SIZE_HINT]: html.length },
    });
    t.same(br(), q10, `brotli 10: ${fast.length} → ${q10.length} bytes`);
    t.match(lines.join(''), /"effort":"fast".*"effort":"max"/s, 'the log tells each step');
    // Another gateway of the process, with the same page, gets the best bytes straight away.
    const other = new PublicPage({
      document,
      zone: 'Africa/Johannesburg',
      maxAgeDays: 60,
      log: pino({ level: 'silent' }),
      bestAfterMs: 3_600_000,
    });
    other.prepare(snap, NOW);
    await waitFor('the best bytes, made once', () => other.render(snap, '"fresh"').br !== null, scaled(5000));
    t.same(other.render(snap, '"fresh"').br?.body, q10, 'not compressed again, nor fast first');
  },
);
