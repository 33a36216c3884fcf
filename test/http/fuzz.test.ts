import { connect } from 'node:net';
import fc from 'fast-check';
import t from 'tap';
import { ERROR_STATUS } from '../../src/http/error-kinds.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { scaled } from '../helpers/wait.js';

// npm test sends 5,000; the quick loop (npm run test:unit) 1,000, for 6 s less CPU. FPG_FUZZ_RUNS
// sets it, for a longer hunt.
const RUNS = Number(process.env['FPG_FUZZ_RUNS'] ?? 5000);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`FPG_FUZZ_RUNS must be a whole number >= 1, not ${RUNS}`);
// Every head is answered within the gateway's request timeout (1 s, below), with a margin.
const ANSWER_MS = scaled(3000);
const STATUSES = new Set<number>([200, ...Object.values(ERROR_STATUS)]);

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `head` on a new connection and reads the first final answer (skipping 1xx) by its
 * Content-Length; rejects if none arrives in time or the bytes are not an HTTP/1.1 answer.
 */
function ask(port: number, head: string, isHead: boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    const done = (err: Error | null, a?: Answer): void => {
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(a as Answer);
    };
    const timer = setTimeout(() => done(new Error(`no answer in time to ${JSON.stringify(head)}`)), ANSWER_MS);
    const parse = (): void => {
      const end = data.indexOf('\r\n\r\n');
      if (end === -1) return;
      const lines = data.subarray(0, end).toString('latin1').split('\r\n');
      const m = /^HTTP\/1\.1 (\d{3}) [^\r\n]*$/.exec(lines[0] ?? '');
      if (!m) return done(new Error(`not an HTTP answer: ${JSON.stringify(lines[0])}`));
      const status = Number(m[1]);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        if (colon < 1) return done(new Error(`bad header line ${JSON.stringify(line)}`));
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      if (status < 200) {
        data = data.subarray(end + 4);
        return parse();
      }
      const length = isHead ? 0 : Number(headers['content-length'] ?? Number.NaN);
      if (!Number.isInteger(length)) return done(new Error(`no Content-Length in ${JSON.stringify(lines)}`));
      if (data.length < end + 4 + length) return;
      done(null, { status, headers, body: data.subarray(end + 4, end + 4 + length).toString('utf8') });
    };
    socket.on('data', (c: Buffer) => {
      data = Buffer.concat([data, c]);
      parse();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => done(new Error(`closed without an answer to ${JSON.stringify(head)}`)));
    socket.write(head, 'latin1');
  });
}

t.test(
  `${RUNS} random request heads: a well-formed answer from the error table, counted only when served`,
  async (t) => {
    const gw = await startGateway(
      t,
      {
        limits: { invalid_key_throttle: { max_attempts: 1_000_000 } },
        log: { access: false },
        server: { headers_timeout_ms: 1000, request_timeout_ms: 1000 },
      },
      { clock: new ManualClock(NOW) },
    );
    const { api_key } = await newAccount(gw, { plan: 'enterprise', limit: 1_000_000 });
    const port = gw.app.publicAddress.port;

    // Mostly heads that parse, so that every route and key check is reached; some raw bytes.
    const text = fc.string({ unit: 'binary-ascii', maxLength: 40 });
    const printable = fc.string({ maxLength: 40 });
    const likely = <T>(usual: fc.Arbitrary<T>, odd: fc.Arbitrary<T>): fc.Arbitrary<T> =>
      fc.oneof({ arbitrary: usual, weight: 9 }, { arbitrary: odd, weight: 1 });
    const method = likely(fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'OPTIONS', 'get'), text);
    const path = fc.constantFrom(
      '/fuel-api/api/simple-current.php',
      '/fuel-api/api/current.php',
      '/fuel-api/api/historical.php',
      '/healthz',
      '/readyz',
      '/',
      '*',
      'http://a/fuel-api/api/current.php',
    );
    const query = fc.oneof(
      fc.constant(`?api_key=${api_key}`),
      fc.constant(`?api_key=${api_key}`),
      fc.constant(''),
      fc.constant(`?api_key=${api_key}`),
      fc.constant(`?api_key=${api_key}&month=2&year=2025`),
      fc.constant(`?api_key=${api_key}&api_key=${api_key}`),
      text.map((s) => `?api_key=${encodeURIComponent(s)}`),
      text.map((s) => `?${s}`),
    );
    const target = likely(
      fc.tuple(path, query).map(([p, q]) => p + q),
      fc.oneof(text, printable),
    );
    const version = likely(fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'http/1.1'), text);
    const name = likely(
      fc.oneof(
        fc.constantFrom('Host', 'X-API-Key', 'Accept', 'Connection', 'X-Forwarded-For', 'Content-Length'),
        fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/).filter((n) => !/^(expect|transfer-encoding)$/i.test(n)),
      ),
      text,
    );
    const value = likely(fc.oneof(fc.constantFrom(api_key, 'a', '0', 'x', 'close', ''), printable), text);
    const headers = fc.array(fc.tuple(name, value), { maxLength: 6 });
    const head = fc
      .tuple(method, target, version, headers, likely(fc.constant(true), fc.constant(false)))
      .map(
        ([m, tg, v, hs, host]) =>
          `${m} ${tg} ${v}\r\n${host ? 'Host: a\r\n' : ''}${hs.map(([n, val]) => `${n}: ${val}\r\n`).join('')}\r\n`,
      );

    let counted = 0;
    let served = 0;
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(head, async (h) => {
        // Only a HEAD request's answer has no body; Node's parser decides by the method it read.
        const isHead = h.startsWith('HEAD ');
        const a = await ask(port, h, isHead);
        seen.set(a.status, (seen.get(a.status) ?? 0) + 1);
        if (!STATUSES.has(a.status)) throw new Error(`status ${a.status} is not in the error table`);
        if (a.status >= 400 && !isHead) {
          const body = JSON.parse(a.body) as { success: unknown; message: unknown };
          if (body.success !== false || typeof body.message !== 'string' || Object.keys(body).length !== 2)
            throw new Error(`not the error body: ${a.body}`);
        }
        if (a.status === 200) served++;
        if (a.status === 200 && !isHead && a.headers['x-ratelimit-limit'] !== undefined) counted++;
      }),
      { numRuns: RUNS },
    );
    t.pass(`statuses: ${JSON.stringify(Object.fromEntries([...seen].sort((x, y) => x[0] - y[0])))}`);
    const usage = await gw.get(`/fuel-api/api/simple-current.php?api_key=${api_key}`, { method: 'HEAD' });
    t.equal(1_000_000 - Number(usage.headers.get('x-ratelimit-remaining')), counted, `${counted} counted, all served`);
    t.ok(served > 0, `${served} answers of 200`);
    t.equal((await gw.get('/healthz')).status, 200, 'still serving');
  },
);
