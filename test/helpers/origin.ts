import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { MAX_JSON_BYTES } from '../../src/upstream/bodies.js';
import type { TestContext } from './context.js';
import { freePort } from './redis.js';
import { sleep } from './wait.js';

/** How the origin behaves for its current endpoints (origin-only paths keep their own behaviour). */
export type OriginMode = 'ok' | 'error500' | 'html' | 'wrong_shape' | 'refuse_key' | 'slow';

export interface SeenRequest {
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  remotePort: number;
  /** When it arrived (Date.now()). */
  at: number;
}

export interface TestOrigin {
  url: string;
  key: string;
  mode: OriginMode;
  /** Delay of 'slow' answers and of /origin/slow. */
  slowMs: number;
  /** Every request the origin received, oldest first. */
  seen: SeenRequest[];
  /** Requests to current.php (the gateway's polls). */
  polls(): number;
  /** Changes the origin's current prices (inland petrol 95) and, optionally, its effective date. */
  setPrice(petrol95: string, effectiveDate?: string): void;
  /**
   * How /origin/cacheable… answers (for the pass-through cache): its Cache-Control (null: none),
   * a delay, a status, extra headers, CSV instead of JSON, padding bytes, and the ETag's version.
   * `held`: answers wait for it too (a test releases them once what it waits for has happened).
   */
  cacheable: {
    control: string | null;
    delayMs: number;
    held?: Promise<void>;
    status: number;
    extra: Record<string, string>;
    csv: boolean;
    padBytes: number;
    version: number;
  };
  /** Requests to /origin/cacheable… received, and of those, answered 304; the last one's headers. */
  cacheableHits(): number;
  /** Holds /origin/cacheable… answers (`cacheable.held`) until the returned function is called. */
  holdCacheable(): () => void;
  lastCacheableHeaders: IncomingHttpHeaders | null;
  notModified: number;
  /** Connections open right now, and ever opened. */
  openSockets(): number;
  connections(): number;
  stop(): Promise<void>;
  start(): Promise<void>;
}

const region = (petrol95: string) => ({
  zone: null,
  price_basis: 'official_regional_reference',
  petrol_93: null,
  petrol_95: petrol95,
  diesel_50ppm: '28.68',
  diesel_500ppm: '28.24',
});

const ORIGIN_USAGE = {
  plan_type: 'enterprise',
  requests_used: 4242,
  request_limit: 1000000,
  requests_remaining: 995758,
  request_period: 'monthly',
  period_started_at: '2026-11-01T00:00:00+02:00',
  period_ends_at: '2026-12-01T00:00:00+02:00',
};

/** The size of /origin/large…'s answers: well past what the gateway reads whole (4 MiB), so streamed. */
export const LARGE_ANSWER_BYTES = 32 << 20;
let largeBuffer: Buffer | null = null;
/** Made on first use: most tests never ask for it. */
const largeBody = (): Buffer => {
  largeBuffer ??= Buffer.alloc(LARGE_ANSWER_BYTES, 'fuel price data ');
  return largeBuffer;
};

/**
 * What /origin/large-dies and -stalls send before they fail: a little past what the gateway reads
 * whole (src/upstream/bodies.ts, 4 MiB), so the answer is streamed and its head is out. No more:
 * on a busy machine 8 MiB did not pass through in a 9 s upstream timeout.
 */
const STREAMED_PART = MAX_JSON_BYTES + (256 << 10);

const large = (res: ServerResponse): ServerResponse =>
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': LARGE_ANSWER_BYTES });

/**
 * The path as Tomcat and Jetty read it: each segment's `;parameters` dropped, then dot segments
 * resolved, so `/origin/..;/fuel-api/api/current.php` is the origin's own current.php.
 */
function servletPath(path: string): string {
  const out: string[] = [];
  for (const segment of path.split('/')) {
    const s = segment.split(';')[0] ?? '';
    if (s === '..') {
      if (out.length > 1) out.pop();
    } else if (s !== '.') out.push(s);
  }
  return out.join('/') || '/';
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * A real fuel-price origin on a loopback port: the spec's two current endpoints for one service
 * key (with the origin's own `usage` and an ETag), and origin-only paths under /origin/ for the
 * pass-through tests. It records every request it receives.
 */
export async function startOrigin(t: TestContext, key = 'origin-service-key-123'): Promise<TestOrigin> {
  const port = await freePort();
  let effective = '2026-11-04';
  let petrol95 = '25.10';
  let version = 1;
  let opened = 0;
  let flaky = 0;
  let cacheableHits = 0;
  const sockets = new Set<Socket>();
  let server: Server | null = null;

  const origin: TestOrigin = {
    url: `http://127.0.0.1:${port}`,
    key,
    mode: 'ok',
    slowMs: 2000,
    seen: [],
    polls: () => origin.seen.filter((r) => r.path === '/fuel-api/api/current.php').length,
    cacheable: { control: 'max-age=60', delayMs: 0, status: 200, extra: {}, csv: false, padBytes: 0, version: 1 },
    cacheableHits: () => cacheableHits,
    holdCacheable: () => {
      let release = (): void => undefined;
      origin.cacheable.held = new Promise<void>((r) => (release = r));
      return () => release();
    },
    lastCacheableHeaders: null,
    notModified: 0,
    setPrice(p, date) {
      petrol95 = p;
      if (date) effective = date;
      version++;
    },
    openSockets: () => [...sockets].filter((s) => !s.destroyed).length,
    connections: () => opened,
    async start() {
      if (server) return;
      const s = createServer((req, res) => {
        const url = new URL(req.url ?? '/', origin.url);
        url.pathname = servletPath(url.pathname);
        // Kept out of `seen` (a flood of 100,000 would be held): counted instead.
        if (url.pathname.startsWith('/origin/cacheable')) {
          cacheableHits++;
          origin.lastCacheableHeaders = req.headers;
          return void cacheable(url, req.headers, res);
        }
        origin.seen.push({
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          remotePort: req.socket.remotePort ?? 0,
          at: Date.now(),
        });
        void handle(url, req.headers, res);
      });
      s.on('connection', (socket: Socket) => {
        opened++;
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => s.listen(port, '127.0.0.1', resolve));
      server = s;
    },
    async stop() {
      const s = server;
      server = null;
      if (!s) return;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => s.close(resolve));
    },
  };

  async function handle(url: URL, headers: IncomingHttpHeaders, res: ServerResponse): Promise<void> {
    const authorised = url.searchParams.get('api_key') === origin.key || headers['x-api-key'] === origin.key;
    const path = url.pathname;
    if (path === '/fuel-api/api/current.php' || path === '/fuel-api/api/simple-current.php') {
      // A slow origin: the delay is the behaviour under test.
      if (origin.mode === 'slow') await sleep(origin.slowMs);
      if (origin.mode === 'refuse_key' || !authorised)
        return json(res, 401, { success: false, message: 'Invalid API key.' });
      if (origin.mode === 'error500') return json(res, 500, { success: false, message: 'Database unavailable.' });
      if (origin.mode === 'html') {
        res.writeHead(200, { 'content-type': 'text/html' });
        return void res.end('<html><body>Maintenance</body></html>');
      }
      if (origin.mode === 'wrong_shape') return json(res, 200, { success: true, prices: [] });
      const etag = `"v${version}"`;
      if (headers['if-none-match'] === etag) {
        res.writeHead(304, { etag });
        return void res.end();
      }
      const regions = { coastal: region(petrol95), inland: region(petrol95) };
      const body =
        path === '/fuel-api/api/current.php'
          ? {
              success: true,
              source: 'Origin Fuel Service',
              effective_date: effective,
              updated_at: `${effective} 00:01:00`,
              data: regions,
              usage: ORIGIN_USAGE,
            }
          : { success: true, effective_date: effective, fuel_prices: regions, usage: ORIGIN_USAGE };
      return json(res, 200, body, { etag });
    }
    if (!path.startsWith('/origin/')) return json(res, 404, { success: false, message: 'Endpoint not found.' });
    if (!authorised) return json(res, 401, { success: false, message: 'Invalid API key.' });
    switch (path) {
      case '/origin/echo':
        return json(res, 200, { success: true, path, region: url.searchParams.get('region'), usage: ORIGIN_USAGE });
      case '/origin/gzip': {
        const body = gzipSync(JSON.stringify({ success: true, compressed: true, usage: ORIGIN_USAGE }));
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'content-length': body.length,
        });
        return void res.end(body);
      }
      case '/origin/text':
        res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': 'session=origin-secret' });
        return void res.end('plain text from the origin');
      case '/origin/error500':
        return json(res, 500, { success: false, message: 'Database unavailable.' });
      case '/origin/error500html':
        res.writeHead(500, { 'content-type': 'text/html' });
        return void res.end('<h1>500</h1>');
      case '/origin/flaky':
        // Every other request fails: for counting under mixed outcomes.
        if (++flaky % 2 === 0) return json(res, 503, { success: false, message: 'Busy.' });
        return json(res, 200, { success: true, n: flaky });
      case '/origin/hang':
        return; // never answers
      case '/origin/redirect':
        // An origin that echoes the request URL (the service key in it) into a redirect and a body.
        res.writeHead(301, {
          location: `${origin.url}/origin/echo/?${url.searchParams}`,
          link: `<${url.pathname}?${url.searchParams}>; rel="self"`,
        });
        return void res.end();
      case '/origin/moved':
        // A redirect that names nothing of the request: passed on.
        res.writeHead(301, { location: `${origin.url}/origin/echo/` });
        return void res.end();
      case '/origin/leak-error':
        return json(res, 403, { success: false, message: `Key ${url.searchParams.get('api_key')} may not read this.` });
      case '/origin/slow':
        await sleep(origin.slowMs);
        return json(res, 200, { success: true, slow: true });
      case '/origin/large':
        return void large(res).end(largeBody());
      case '/origin/large-dies':
        // Part of the body, then the origin's connection breaks.
        return void large(res).write(largeBody().subarray(0, STREAMED_PART), () => res.socket?.destroy());
      case '/origin/large-stalls':
        // Part of the body, then nothing more: the rest never comes.
        return void large(res).write(largeBody().subarray(0, STREAMED_PART));
    }
    json(res, 404, { success: false, message: 'Endpoint not found.' });
  }

  async function cacheable(url: URL, headers: IncomingHttpHeaders, res: ServerResponse): Promise<void> {
    const c = origin.cacheable;
    if (c.delayMs > 0) await sleep(c.delayMs);
    await c.held;
    if (url.searchParams.get('api_key') !== origin.key)
      return json(res, 401, { success: false, message: 'Invalid API key.' });
    if (c.status >= 400) return json(res, c.status, { success: false, message: 'Database unavailable.' });
    const etag = `"c${c.version}"`;
    const cc: Record<string, string> = c.control === null ? {} : { 'cache-control': c.control };
    if (headers['if-none-match'] === etag) {
      origin.notModified++;
      res.writeHead(304, { etag, ...cc });
      return void res.end();
    }
    const query = [...url.searchParams].filter(([k]) => k !== 'api_key');
    if (c.csv) {
      const text = `path,query,n\n${url.pathname},"${new URLSearchParams(query)}",${cacheableHits}\n`;
      res.writeHead(c.status, {
        'content-type': 'text/csv',
        'content-length': Buffer.byteLength(text),
        etag,
        ...cc,
        ...c.extra,
      });
      return void res.end(text);
    }
    const body = {
      success: true,
      path: url.pathname,
      query,
      n: cacheableHits,
      pad: 'x'.repeat(c.padBytes),
      usage: ORIGIN_USAGE,
    };
    json(res, c.status, body, { etag, ...cc, ...c.extra });
  }

  t.teardown(() => origin.stop());
  await origin.start();
  return origin;
}
