import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import t from 'tap';
import { ROOT, serve } from '../helpers/cli.js';

const SIMPLE = '/fuel-api/api/simple-current.php';

/** Reads one HTTP answer (head and Content-Length body) from a socket. */
function readAnswer(socket: Socket): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (c: Buffer): void => {
      buf += c.toString();
      const end = buf.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
      if (buf.length < end + 4 + length) return;
      socket.off('data', onData);
      resolve({ head: buf.slice(0, end), body: buf.slice(end + 4, end + 4 + length) });
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

t.test(
  'SIGTERM: a request arriving on an idle keep-alive connection while draining is answered, with Connection: close',
  async (t) => {
    const gw = serve(t);
    const [, url] = await gw.waitFor(/curl '(http:\/\/[^']+)'/);
    const { port, pathname, search } = new URL(url as string);
    const socket = connect(Number(port), '127.0.0.1');
    t.teardown(() => socket.destroy());
    const ask = `GET ${pathname}${search} HTTP/1.1\r\nHost: localhost\r\n\r\n`;
    socket.write(ask);
    t.match((await readAnswer(socket)).head, /^HTTP\/1\.1 200 /);
    const exit = gw.stop('SIGTERM');
    await gw.waitFor(/"msg":"shutting down"/);
    socket.write(ask);
    const second = await readAnswer(socket);
    t.match(second.head, /^HTTP\/1\.1 200 /, 'answered');
    t.match(second.head, /\r\nConnection: close/i, 'and told the connection ends');
    await new Promise((r) => socket.once('close', r));
    t.pass('the server closed the connection after the answer');
    t.equal(await exit, 0);
  },
);

t.test('every access log line of answered requests reaches stdout when SIGTERM stops the gateway', async (t) => {
  const gw = serve(t);
  const [, url] = await gw.waitFor(/curl '(http:\/\/[^']+)'/);
  const base = (url as string).replace(SIMPLE, '/fuel-api/api/current.php');
  let answered = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      for (let i = 0; i < 30; i++) if ((await fetch(base)).status === 200) answered++;
    }),
  );
  t.equal(answered, 100, 'the trial allowance of the demo key');
  t.equal(await gw.stop('SIGTERM'), 0);
  const lines = gw
    .output()
    .split('\n')
    .filter((l) => l.includes('"msg":"request"'));
  t.equal(lines.length, 300, 'one line per answer, none left in the buffer');
  t.equal(lines.filter((l) => l.includes('"status":200')).length, 100);
  const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  t.ok(
    parsed.every((l) => /^acct_[0-9a-f]+$/.test(String(l['account'])) && l['client'] === '127.0.0.1'),
    'each names the account and the client address',
  );
  t.ok(
    parsed.every((l) => l['url'] === '/fuel-api/api/current.php?api_key=[REDACTED]'),
    'each has the URL redacted, the first sight of the key as every later request',
  );
  t.same(
    Object.keys(parsed[0] ?? {}),
    ['level', 'time', 'service', 'pid', 'method', 'url', 'status', 'ms', 'account', 'client', 'req_id', 'msg'],
    "in pino's line shape",
  );
  t.match(parsed[0], {
    level: 30,
    service: 'fuel-gateway',
    method: 'GET',
    url: '/fuel-api/api/current.php?api_key=[REDACTED]',
    msg: 'request',
  });
});

t.test('a quiet gateway writes its buffered access log lines within about a second', async (t) => {
  const gw = serve(t);
  const [, url] = await gw.waitFor(/curl '(http:\/\/[^']+)'/);
  t.equal((await fetch(url as string)).status, 200);
  const started = Date.now();
  await gw.waitFor(/"msg":"request"/, 3000);
  t.ok(Date.now() - started < 2500, `the line came out after ${Date.now() - started} ms, the process still running`);
  t.equal(await gw.stop('SIGTERM'), 0);
});

t.test('a fatal error flushes the buffered log before the process exits 1', async (t) => {
  const child = spawn(process.execPath, [...process.execArgv, 'test/fixtures/fatal-after-logging.ts'], {
    cwd: ROOT,
    env: { ...process.env, LINES: '5000' },
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise((r) => child.on('exit', r));
  t.equal(code, 1);
  const lines = out.split('\n').filter((l) => l.startsWith('{'));
  t.equal(lines.filter((l) => l.includes('"msg":"line"')).length, 5000, 'every line written');
  t.match(lines[lines.length - 1], /"level":60.*boom.*"msg":"uncaught exception: exiting"/);
});

t.test('a SIGTERM the moment the listeners are ready, before the start has finished, drains and exits 0', async (t) => {
  // The listeners serve before the start is done (the demo accounts are still being written): a
  // signal in that moment once ended the process outright, its counts never written.
  const gw = serve(t);
  const exited = new Promise<number | null>((resolve) => gw.child.on('exit', resolve));
  let sent = false;
  gw.child.stdout?.on('data', () => {
    if (sent || !/"msg":"public listener ready"/.test(gw.output())) return;
    sent = true;
    gw.child.kill('SIGTERM');
  });
  const code = await exited;
  t.ok(sent, 'signalled on the ready line');
  t.equal(code, 0, 'exits 0, not by the signal');
  t.match(gw.output(), /"msg":"shutting down".*"reason":"SIGTERM"|"reason":"SIGTERM".*"msg":"shutting down"/);
});
