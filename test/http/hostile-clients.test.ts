import { readdirSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { generateKey } from '../../src/keys/key-generator.js';
import { gatewayProcess, privateConfig } from '../helpers/cli.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/raw.js';
import { waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const BAD_REQUEST = '{"success":false,"message":"Bad request."}';
const TOO_LARGE = '{"success":false,"message":"Request header fields too large."}';

const fds = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

// Header lines a slow client sends, one every TRICKLE_MS: 1.2 s, past the 1 s headers timeout, and
// over before the gateway can have closed (the 408 at 1 s at the earliest, then LINGER_MS). A line
// written after that close is answered with a reset, which destroys the socket and drops the 408
// still unread in its receive buffer: beside a busy bench, a wait for its end then never ended.
const TRICKLE_MS = 300;
const TRICKLE_LINES = 4;

/** A socket that sends `head` and then, if asked, a few header lines slowly, and never reads or closes. */
function loris(port: number, head: string, trickle: boolean, open: Socket[]): void {
  const s = connect(port, '127.0.0.1');
  s.on('error', () => undefined);
  // Paused: what the gateway answers waits in this side's receive buffer, read only at the end.
  s.pause();
  open.push(s);
  if (head) s.write(head);
  if (!trickle) return;
  let n = 0;
  const timer = setInterval(() => {
    if (s.destroyed || n === TRICKLE_LINES) clearInterval(timer);
    else s.write(`X-${n++}: y\r\n`);
  }, TRICKLE_MS);
  s.on('close', () => clearInterval(timer));
}

t.test(
  'slow and silent sockets on both ports are answered and their descriptors released, though clients hold them open',
  async (t) => {
    const gw = await gatewayProcess(
      t,
      privateConfig({ server: { headers_timeout_ms: 1000, request_timeout_ms: 2000 } }),
    );
    const pid = gw.child.pid as number;
    const before = fds(pid);
    const open: Socket[] = [];
    t.teardown(() => {
      for (const s of open) s.destroy();
    });
    const ports = [Number(new URL(gw.base).port), Number(new URL(gw.admin).port)];
    for (const port of ports) {
      for (let i = 0; i < 40; i++) loris(port, 'GET /healthz HTTP/1.1\r\nHost: a\r\n', true, open);
      for (let i = 0; i < 40; i++) loris(port, '', false, open);
    }
    await waitFor('the gateway to hold the sockets', () => fds(pid) >= before + 150, 5000);
    t.pass(`${fds(pid) - before} descriptors held while the heads trickle in`);
    // headers timeout 1 s, checked every second, answered and closed within LINGER_MS (1 s): 3 s, and slack.
    const took = await waitFor('the descriptors to be released', () => fds(pid) <= before + 5, 10_000);
    t.pass(`released ${took} ms later, with every client still holding its socket`);
    // Now read what each client was sent: the answer, then the end of the connection.
    const received = await Promise.all(
      open.map(
        (s) =>
          new Promise<string>((resolve) => {
            // Destroyed already: its close has passed, and what it was sent is lost.
            if (s.destroyed) return resolve('(reset before it was read)');
            let data = '';
            s.on('data', (c: Buffer) => (data += c.toString('latin1')));
            s.on('end', () => resolve(data));
            s.on('close', () => resolve(data));
            s.resume();
          }),
      ),
    );
    const trickled = received.filter((_, i) => i % 80 < 40);
    const silent = received.filter((_, i) => i % 80 >= 40);
    t.equal(trickled.length, 80);
    t.same(
      trickled.filter((d) => !/^HTTP\/1\.1 408 [^\r]*\r\n[\s\S]*\r\n\r\n\{"success":false,/.test(d)),
      [],
      'every slow head was answered 408 with the error body, though its client never read',
    );
    t.same(
      silent.filter((d) => d !== '' && !/^HTTP\/1\.1 408 /.test(d)),
      [],
      'every silent socket was closed, at most with a 408',
    );
  },
);

t.test('a bad request in a pipeline comes after the answers of the requests before it, all counted', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['developer'] as string;
  const good = `GET ${SIMPLE}?api_key=${key} HTTP/1.1\r\nHost: a\r\n\r\n`;
  const bad = 'GET /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n';
  const out = await rawRequest(gw.app.publicAddress.port, good.repeat(5) + bad);
  const statuses = [...out.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1]);
  t.same(statuses, ['200', '200', '200', '200', '200', '400'], 'five 200s in order, then the 400');
  const remaining = [...out.matchAll(/X-RateLimit-Remaining: (\d+)/gi)].map((m) => m[1]);
  t.same(remaining, ['99', '98', '97', '96', '95'], 'each answer carries its own count');
  t.ok(out.endsWith(BAD_REQUEST), 'the 400 has the error body');
  const head = await gw.get(`${SIMPLE}?api_key=${key}`, { method: 'HEAD' });
  t.equal(head.headers.get('x-ratelimit-remaining'), '95', 'the store counted exactly the five answered');
});

t.test('heads Node would let through: two Hosts, no Host, too many fields', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const port = gw.app.publicAddress.port;
  const key = gw.app.demoKeys['developer'] as string;
  const statusAndBody = (out: string): [string, string] => [
    out.split('\r\n')[0] as string,
    out.slice(out.indexOf('\r\n\r\n') + 4),
  ];
  const close = 'Connection: close\r\n';
  t.same(
    statusAndBody(await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n${close}\r\n`)),
    ['HTTP/1.1 400 Bad Request', BAD_REQUEST],
    'two Host headers: 400',
  );
  t.same(
    statusAndBody(await rawRequest(port, `GET /healthz HTTP/1.1\r\n${close}\r\n`)),
    ['HTTP/1.1 400 Bad Request', BAD_REQUEST],
    'no Host: 400 with the error body',
  );
  t.match(await rawRequest(port, `GET /healthz HTTP/1.0\r\n\r\n`), /^HTTP\/1\.1 200 /, 'HTTP/1.0 needs no Host');
  const small = 'a:b\r\n'.repeat(4000);
  t.same(
    statusAndBody(await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: a\r\n${small}${close}\r\n`)),
    ['HTTP/1.1 431 Request Header Fields Too Large', TOO_LARGE],
    '4,000 small header fields (20 KB): 431',
  );
  const filler = 'x:y\r\n'.repeat(2000);
  t.same(
    statusAndBody(
      await rawRequest(port, `GET ${SIMPLE} HTTP/1.1\r\nHost: a\r\n${filler}X-API-Key: ${key}\r\n${close}\r\n`),
    ),
    ['HTTP/1.1 431 Request Header Fields Too Large', TOO_LARGE],
    'a key sent as header 2,001 is not silently dropped: 431',
  );
  const fields = 'x:y\r\n'.repeat(gw.config.server.max_headers - 2);
  t.match(
    await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: a\r\n${fields}${close}\r\n`),
    /^HTTP\/1\.1 200 /,
    'max_headers fields exactly: served',
  );
  const admin = gw.app.adminAddress.port;
  t.match(
    await rawRequest(admin, `GET /admin/prices HTTP/1.1\r\nHost: localhost\r\nHost: evil\r\n${close}\r\n`),
    /^HTTP\/1\.1 400 [\s\S]*"code":"BAD_REQUEST"/,
    'admin: two Hosts, 400',
  );
  t.match(
    await rawRequest(admin, `GET /admin/prices HTTP/1.1\r\nHost: localhost\r\n${small}${close}\r\n`),
    /^HTTP\/1\.1 431 [\s\S]*"code":"HEADERS_TOO_LARGE"/,
    'admin: too many fields, 431',
  );
});

t.test('made-up well-formed keys in long queries are remembered without the text of their requests', async (t) => {
  const gw = await startGateway(t, { log: { access: false } });
  const port = gw.app.publicAddress.port;
  // The gateway runs in this process, so its heap can be measured after a full collection.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heapMiB = (): number => {
    gc();
    return process.memoryUsage().heapUsed / 2 ** 20;
  };
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  t.teardown(() => agent.destroy());
  const pad = 'x'.repeat(7000);
  const statuses = new Set<number>();
  const send = async (count: number): Promise<void> => {
    let sent = 0;
    const one = (): Promise<void> =>
      new Promise((resolve, reject) => {
        const path = `${SIMPLE}?api_key=${generateKey()}&pad=${pad}`;
        get({ agent, host: '127.0.0.1', port, path }, (res) => {
          statuses.add(res.statusCode as number);
          res.resume().on('end', resolve);
        }).on('error', reject);
      });
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (sent++ < count) await one();
      }),
    );
  };
  await send(200);
  const before = heapMiB();
  await send(3000);
  const grown = heapMiB() - before;
  t.same([...statuses].sort(), [401, 429], 'refused as unknown, then as a blocked address');
  // Each key kept with its 7 KB query would hold 20 MiB.
  t.ok(grown < 6, `the heap grew ${grown.toFixed(1)} MiB over 3,000 such keys`);
});
