/**
 * The gateway's own key at the origin (upstream.api_key) must never reach a client, however the
 * origin spells it when it echoes the request back: a real origin on loopback echoes the forwarded
 * URL in the spellings real servers use (lower-case percent escapes, PHP's JSON `\/`, `\uXXXX`,
 * `+` read as a space, HTML `&amp;`), in bodies of every content type, headers and Location.
 * Two accounts ask in turn, so a stored or shared answer would reach the second one.
 */
import { createServer, get as httpGet, type IncomingMessage, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { newAccount } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { freePort } from '../helpers/redis.js';
import { counted } from '../helpers/usage.js';
import { waitFor } from '../helpers/wait.js';

const SERVICE_KEY = 'svc/Key+With=Odd&chars~0123';

const hex = (c: string): string => c.charCodeAt(0).toString(16).padStart(2, '0');
/** Every character but letters and digits percent-escaped, in lower case, as some servers write them. */
const lowerPercent = (s: string): string => s.replace(/[^A-Za-z0-9]/g, (c) => `%${hex(c)}`);
/** PHP's json_encode: `/` written `\/`. */
const jsonSlash = (s: string): string => s.replace(/\//g, '\\/');
/** Every character as a JSON `\uXXXX` escape. */
const unicode = (s: string): string => s.replace(/./g, (c) => `\\u00${hex(c)}`);
/** A `+` read as a space (form decoding), as an origin that decoded the query echoes it. */
const plusAsSpace = (s: string): string => s.replace(/\+/g, ' ');
const htmlAmp = (s: string): string => s.replace(/&/g, '&amp;');
/** PHP's htmlentities($s, ENT_QUOTES|ENT_HTML5): every character with an HTML5 name written by it. */
const HTML5_NAMES: Record<string, string> = { '/': '&sol;', '+': '&plus;', '=': '&equals;', '&': '&amp;' };
const html5Named = (s: string): string => s.replace(/[/+=&]/g, (c) => HTML5_NAMES[c] ?? c);
/** `&amp` without its semicolon (a legacy name HTML5 still reads), the rest as decimal references. */
const legacyAmp = (s: string): string => s.replace(/[/+=&]/g, (c) => (c === '&' ? '&amp' : `&#${c.charCodeAt(0)};`));
/** Hexadecimal references with an upper-case X and mixed-case digits, as some encoders write them. */
const upperHex = (s: string): string =>
  s.replace(/[^A-Za-z0-9]/g, (c) => `&#X${c.charCodeAt(0).toString(16).toUpperCase()};`);

/** Every spelling a client could read the key back from. */
const SPELLINGS = [
  SERVICE_KEY,
  encodeURIComponent(SERVICE_KEY),
  new URLSearchParams({ k: SERVICE_KEY }).toString().slice(2),
  lowerPercent(SERVICE_KEY),
  jsonSlash(SERVICE_KEY),
  unicode(SERVICE_KEY),
  plusAsSpace(SERVICE_KEY),
  htmlAmp(SERVICE_KEY),
  html5Named(SERVICE_KEY),
  legacyAmp(SERVICE_KEY),
  upperHex(SERVICE_KEY),
  // UTF-16 read as bytes: a NUL beside each character, before it (big-endian) or after it.
  [...SERVICE_KEY].join('\0'),
].map((s) => s.toLowerCase());

const leaks = (text: string): string[] => SPELLINGS.filter((s) => text.toLowerCase().includes(s));

/** Larger than the gateway reads whole (4 MiB): streamed through. */
const BIG = 'a'.repeat(5 << 20);

type Reply = (res: ServerResponse, key: string) => void;

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra = {}): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'max-age=60', ...extra });
  res.end(body);
}

/** How the origin echoes the service key it was sent, by path. */
const REPLIES: Record<string, Reply> = {
  '/v2/lower-json': (res, k) =>
    send(res, 200, 'application/json', `{"success":true,"url":"/v2?api_key=${lowerPercent(k)}"}`),
  '/v2/slash-json': (res, k) => send(res, 200, 'application/json', `{"success":true,"key":"${jsonSlash(k)}"}`),
  '/v2/unicode-json': (res, k) => send(res, 200, 'application/json', `{"success":true,"key":"${unicode(k)}"}`),
  '/v2/space-json': (res, k) => send(res, 200, 'application/json', JSON.stringify({ key: plusAsSpace(k) })),
  '/v2/gzip-json': (res, k) =>
    send(res, 200, 'application/json', gzipSync(`{"key":"${unicode(k)}"}`), { 'content-encoding': 'gzip' }),
  '/v2/csv': (res, k) => send(res, 200, 'text/csv', `url,n\n/v2?api_key=${lowerPercent(k)},1\n`),
  '/v2/text': (res, k) => send(res, 200, 'text/plain', `you asked for /v2?api_key=${lowerPercent(k)}`),
  '/v2/html': (res, k) => send(res, 200, 'text/html', `<a href="/v2?api_key=${htmlAmp(k)}">again</a>`),
  '/v2/html5-named': (res, k) => send(res, 200, 'text/html', `<p>You asked for /v2?api_key=${html5Named(k)}</p>`),
  '/v2/html-legacy-amp': (res, k) => send(res, 200, 'text/html', `<p>api_key=${legacyAmp(k)}</p>`),
  '/v2/html-upper-hex': (res, k) => send(res, 200, 'text/html', `<p>api_key=${upperHex(k)}</p>`),
  '/v2/header': (res, k) =>
    send(res, 200, 'application/json', '{"success":true}', { 'x-request-url': `/v2?api_key=${lowerPercent(k)}` }),
  '/v2/location': (res, k) => {
    res.writeHead(302, { location: `/v2/other?api_key=${lowerPercent(k)}` });
    res.end();
  },
  '/v2/big-clean': (res) => send(res, 200, 'text/plain', BIG),
  '/v2/big-key': (res, k) => send(res, 200, 'text/plain', `${BIG}/v2?api_key=${lowerPercent(k)}${BIG}`),
  '/v2/big-key-early': (res, k) => send(res, 200, 'text/plain', `/v2?api_key=${lowerPercent(k)}${BIG}`),
  '/v2/big-gzip': (res) => send(res, 200, 'text/plain', gzipSync(BIG), { 'content-encoding': 'gzip' }),
  '/v2/utf16le': (res, k) =>
    send(res, 200, 'application/json; charset=utf-16le', Buffer.from(`{"key":"${k}"}`, 'utf16le')),
  '/v2/utf16be': (res, k) =>
    send(res, 200, 'text/plain; charset=utf-16be', Buffer.from(`api_key=${k}`, 'utf16le').swap16()),
  '/v2/array': (res, k) => send(res, 200, 'application/json', JSON.stringify([{ key: k }])),
  '/v2/error-php': (res, k) =>
    send(res, 500, 'application/json', `{"success":false,"message":"Key ${jsonSlash(k)} is over its quota."}`),
  '/v2/error-lower': (res, k) =>
    send(res, 403, 'application/json', `{"success":false,"message":"Key ${lowerPercent(k)} may not read this."}`),
};

interface Origin {
  url: string;
  hits: Map<string, number>;
}

/** A real origin on loopback that answers only the service key, echoing it back as REPLIES say. */
async function startEchoOrigin(t: Test): Promise<Origin> {
  const port = await freePort();
  const hits = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://origin');
    const key = url.searchParams.get('api_key') ?? '';
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    if (key !== SERVICE_KEY)
      return send(res, 401, 'application/json', '{"success":false,"message":"Invalid API key."}');
    const reply = REPLIES[url.pathname];
    if (!reply) return send(res, 404, 'application/json', '{"success":false,"message":"Endpoint not found."}');
    reply(res, key);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${port}`, hits };
}

async function gateway(t: Test, origin: Origin, cacheBytes: number): Promise<TestGateway> {
  return startGateway(t, {
    upstream: {
      url: origin.url,
      api_key: SERVICE_KEY,
      poll_interval_ms: 60_000,
      timeout_ms: 5000,
      proxy_paths: ['/v2/*'],
      cache: { max_bytes: cacheBytes },
    },
    limits: { invalid_key_throttle: { max_attempts: 1000 } },
  });
}

/** The whole answer as a client sees it: status, every header, the body. */
async function seen(gw: TestGateway, path: string, key: string): Promise<{ status: number; text: string }> {
  const r = await gw.get(`${path}?api_key=${key}`, { redirect: 'manual' });
  const body = Buffer.from(await r.arrayBuffer()).toString('utf8');
  return { status: r.status, text: `${r.status}\n${JSON.stringify([...r.headers])}\n${body}` };
}

async function neverServed(t: Test, paths: string[]): Promise<void> {
  const origin = await startEchoOrigin(t);
  for (const cacheBytes of [16 << 20, 0]) {
    const gw = await gateway(t, origin, cacheBytes);
    const a = await newAccount(gw, { plan: 'enterprise', limit: 1_000_000 }, Date.now());
    const b = await newAccount(gw, { plan: 'enterprise', limit: 1_000_000 }, Date.now());
    const mode = cacheBytes === 0 ? 'no cache' : 'cache';
    for (const path of paths) {
      const first = await seen(gw, path, a.api_key);
      const second = await seen(gw, path, b.api_key);
      t.same(leaks(first.text), [], `${mode} ${path}: the first account never gets the key`);
      t.same(leaks(second.text), [], `${mode} ${path}: a second account never gets the key`);
      t.equal(first.status, 502, `${mode} ${path}: an answer carrying the key is a 502`);
      t.equal(second.status, 502, `${mode} ${path}: and never stored: a 502 for the second account too`);
    }
    await waitFor('refunds', async () => (await counted(gw, a.account.id)) + (await counted(gw, b.account.id)) === 0);
    t.pass(`${mode}: none of those answers is counted`);
    t.same(leaks(gw.logs()), [], `${mode}: no spelling of the key is logged`);
    // Every path here is of one proxy_paths entry: one line at once, then at most one a minute.
    const lines = gw.logs().match(/carried the service key/g) ?? [];
    t.equal(lines.length, 1, `${mode}: one error line for the route, not one per answer refused`);
  }
}

t.test(
  'the service key echoed in a spelling the scrubber did not know (lower-case escapes, \\/, \\u, space, &amp;) never reaches any account, in any content type, header or Location',
  (t) =>
    neverServed(t, [
      '/v2/lower-json',
      '/v2/slash-json',
      '/v2/unicode-json',
      '/v2/space-json',
      '/v2/gzip-json',
      '/v2/csv',
      '/v2/text',
      '/v2/html',
      '/v2/header',
      '/v2/location',
    ]),
);

t.test(
  "the service key echoed in HTML5 named entities (PHP's htmlentities ENT_HTML5: &sol; &plus; &equals;), a legacy &amp without its semicolon or &#X2F; never reaches any account",
  (t) => neverServed(t, ['/v2/html5-named', '/v2/html-legacy-amp', '/v2/html-upper-hex']),
);

t.test(
  "the service key in an origin error body (PHP's \\/ escapes) or in a JSON array success never reaches any account",
  (t) => neverServed(t, ['/v2/error-php', '/v2/error-lower', '/v2/array']),
);

t.test('the service key echoed as UTF-16 text (a NUL beside each of its characters) never reaches any account', (t) =>
  neverServed(t, ['/v2/utf16le', '/v2/utf16be']),
);

/** Every byte a client receives before the connection ends, however it ends. */
function received(gw: TestGateway, path: string): Promise<{ status: number; body: Buffer; complete: boolean }> {
  return new Promise((resolve, reject) => {
    httpGet(`${gw.base}${path}`, (res) => {
      const chunks: Buffer[] = [];
      let complete = false;
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (complete = true));
      res.on('error', () => undefined);
      res.on('close', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), complete }));
    }).on('error', reject);
  });
}

t.test(
  'an answer too large to read whole is checked as it streams: cut before any spelling of the key is out, not counted',
  async (t) => {
    const origin = await startEchoOrigin(t);
    for (const cacheBytes of [16 << 20, 0]) {
      const gw = await gateway(t, origin, cacheBytes);
      const a = await newAccount(gw, { plan: 'enterprise', limit: 1_000_000 }, Date.now());
      const clean = await received(gw, `/v2/big-clean?api_key=${a.api_key}`);
      t.equal(clean.status, 200, 'a large clean answer is a 200');
      t.ok(clean.complete && clean.body.equals(Buffer.from(BIG)), 'a large clean answer passes whole');

      const cut = await received(gw, `/v2/big-key?api_key=${a.api_key}`);
      t.notOk(cut.complete, 'the answer carrying the key is cut');
      t.ok(cut.body.length < BIG.length + 10, `only what came before the key (${cut.body.length} bytes)`);
      t.same(leaks(cut.body.toString('utf8')), [], 'no spelling of the key, not even its beginning');
      t.notOk(cut.body.toString('utf8').includes('/v2?api_key='), 'nothing of the echo is out');

      const early = await received(gw, `/v2/big-key-early?api_key=${a.api_key}`);
      t.equal(early.status, 502, 'the key within the first 4 MiB: still a clean 502');
      t.same(leaks(early.body.toString('utf8')), []);

      const gz = await received(gw, `/v2/big-gzip?api_key=${a.api_key}`);
      t.equal(gz.status, 502, 'a compressed answer too large to check is refused');

      await waitFor('refunds', async () => (await counted(gw, a.account.id)) === 1);
      t.pass('only the clean answer is counted');
      t.same(leaks(gw.logs()), [], 'no spelling of the key is logged');
    }
  },
);

t.test('a HEAD whose answer echoes the service key in a header or Location is a 502 too, not counted', async (t) => {
  const origin = await startEchoOrigin(t);
  for (const cacheBytes of [16 << 20, 0]) {
    const gw = await gateway(t, origin, cacheBytes);
    const a = await newAccount(gw, { plan: 'enterprise', limit: 1_000_000 }, Date.now());
    for (const path of ['/v2/location', '/v2/header']) {
      const r = await gw.get(`${path}?api_key=${a.api_key}`, { method: 'HEAD', redirect: 'manual' });
      t.equal(r.status, 502, `HEAD ${path}`);
      t.same(leaks(JSON.stringify([...r.headers])), [], `HEAD ${path}: no spelling of the key in its headers`);
    }
    const clean = await gw.get(`/v2/big-clean?api_key=${a.api_key}`, { method: 'HEAD' });
    t.equal(clean.status, 200, 'a HEAD whose answer carries no key is passed on');
    await waitFor('refunds', async () => (await counted(gw, a.account.id)) === 1);
    t.pass('only the clean HEAD is counted');
  }
});
