import { connect, type Socket } from 'node:net';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { createListener, listen } from '../../src/http/public-server.js';
import type { TestContext } from '../helpers/context.js';
import { received, writeThenHoldLoop } from '../helpers/raw.js';
import { waitFor } from '../helpers/wait.js';

const HEADERS_TIMEOUT_MS = 300;
const answer = (status: number) => ({ status, body: '{}', length: 2 });

async function listener(t: TestContext): Promise<number> {
  const base = loadConfig({ env: {} }).server;
  const server = createListener(
    (_req, res) => res.end('ok'),
    { ...base, headers_timeout_ms: HEADERS_TIMEOUT_MS, request_timeout_ms: HEADERS_TIMEOUT_MS * 2 },
    { bad: answer(400), large: answer(431), timeout: answer(408) },
  );
  const { port } = await listen(server, '127.0.0.1', 0);
  t.teardown(() => server.closeAllConnections());
  t.teardown(() => server.close());
  return port;
}

/** A connection to `port` and everything the listener sends on it until it closes it. */
async function client(t: TestContext, port: number): Promise<{ socket: Socket } & ReturnType<typeof received>> {
  const socket = connect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  const got = received(socket);
  await new Promise((r) => socket.once('connect', r));
  return { socket, ...got };
}

t.test(
  'a request head that reached the socket in time is answered, even when the event loop was held past the headers timeout',
  async (t) => {
    const port = await listener(t);
    const c = await client(t, port);
    // The head begins (its timeout starts when the listener reads these bytes)...
    c.socket.write('GET / HTTP/1.1\r\n');
    await new Promise((r) => setTimeout(r, HEADERS_TIMEOUT_MS / 3));
    // ...and ends well within it: into the listener's socket buffer at once, as both ends are in
    // this process. Then the loop is held past the timeout and Node's check of late heads (a timer,
    // every HEADERS_TIMEOUT_MS here) is due before the poll phase reads the rest.
    await writeThenHoldLoop(c.socket, 'Host: x\r\n\r\n', HEADERS_TIMEOUT_MS * 4);
    await waitFor('an answer', () => /\r\n\r\n/.test(c.text()));
    t.match(c.text(), /^HTTP\/1\.1 200 /, 'answered, not refused as too slow');
  },
);

t.test('a head that is still unfinished after the headers timeout gets 408 and its connection closed', async (t) => {
  const port = await listener(t);
  const c = await client(t, port);
  c.socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
  await waitFor('the listener to close the connection', c.closed);
  t.match(c.text(), /^HTTP\/1\.1 408 /);
  // Even when the loop was held past the timeout while a few more bytes (not the head's end) came.
  const d = await client(t, port);
  d.socket.write('GET / HTTP/1.1\r\n');
  await new Promise((r) => setTimeout(r, HEADERS_TIMEOUT_MS / 3));
  await writeThenHoldLoop(d.socket, 'Host: x\r\n', HEADERS_TIMEOUT_MS * 4);
  await waitFor('the listener to close the second connection', d.closed);
  t.match(d.text(), /^HTTP\/1\.1 408 /);
});
