import { connect } from 'node:net';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { close, createListener, listen } from '../../src/http/public-server.js';
import { received, writeThenHoldLoop } from '../helpers/raw.js';
import { waitFor } from '../helpers/wait.js';

const GRACE_MS = 300;
const HEAD = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n';
const answer = { status: 400, body: '{}', length: 2 };

t.test(
  'a request that reached an open connection within the drain grace is answered, even when the event loop was held past the grace',
  async (t) => {
    const server = createListener((_req, res) => res.end('ok'), loadConfig({ env: {} }).server, {
      bad: answer,
      large: answer,
      timeout: answer,
    });
    const { port } = await listen(server, '127.0.0.1', 0);
    t.teardown(() => server.closeAllConnections());
    const socket = connect(port, '127.0.0.1');
    t.teardown(() => socket.destroy());
    const got = received(socket);
    await new Promise((r) => socket.once('connect', r));
    socket.write(HEAD);
    await waitFor('the first answer', () => /^HTTP\/1\.1 200 [\s\S]*\r\n\r\nok$/.test(got.text()));
    const first = got.text().length;

    // As the gateway drains: whatever is still open is cut only at the request timeout.
    const closing = close(server, GRACE_MS, 10_000);
    // Within the grace, the second request goes out on the kept-alive connection (into the
    // listener's socket buffer at once: both ends are in this process). Then the loop is held
    // past the grace, as a busy machine holds it, after its poll phase: the next turn finds the
    // grace's timer due, and timers run before the sockets are read.
    await new Promise((r) => setTimeout(r, GRACE_MS / 3));
    await writeThenHoldLoop(socket, HEAD, GRACE_MS * 2);
    await closing;
    await waitFor('the listener to close the connection', got.closed);
    t.match(
      got.text().slice(first),
      /^HTTP\/1\.1 200 /,
      'the second request was answered, not dropped with its connection',
    );
  },
);
