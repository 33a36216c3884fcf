import { createServer, connect as netConnect, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import pino from 'pino';
import t from 'tap';
import { isGatewayError } from '../../src/failures.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { consumeSpec, storedAccount } from '../helpers/accounts.js';
import { startRedis } from '../helpers/redis.js';
import { scaled, sleep, waitFor } from '../helpers/wait.js';
import { DAY } from './contract/fixtures.js';

/**
 * A gateway's event loop is busiest when Redis comes back from a stall: every request held in
 * flight is answered at once. A reply that reaches the consume connection while one turn of the
 * loop is busy must be read before that turn's timeout check fails its call: Redis counted it, in
 * time for its deadline, and a 503 would be an answer counted and not served (4 accounts 1 over
 * their 200s in test/scale/consume-attack's SIGSTOP beside the bench, load 15).
 */

const log = pino({ level: 'silent' });
const TIMEOUT_MS = 2000;

const busyUntil = (at: number): void => {
  while (Date.now() < at);
};

t.test('a reply that arrives while the event loop is busy past the timeout is delivered, not failed', async (t) => {
  const server = await startRedis(t);
  const store = new RedisStore(
    { url: server.url, key_prefix: 'busy:', command_timeout_ms: TIMEOUT_MS, connect_timeout_ms: scaled(2000) },
    log,
  );
  t.teardown(() => store.close());
  const a = storedAccount({ label: 'busy' });
  await store.accounts.createAccount(a);
  const spec = consumeSpec(a, { limit: 1_000_000 });
  await waitFor("Redis' clock", () => store.clockKnown(), scaled(5000));
  t.equal((await store.counting.consume(spec, DAY)).kind, 'ok');

  // A socket pair of this process: a byte on it is an I/O callback in a poll phase of the loop.
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  t.teardown(() => listener.close());
  const accepted = new Promise<Socket>((resolve) => listener.once('connection', resolve));
  const client = netConnect((listener.address() as { port: number }).port, '127.0.0.1');
  const peer = await accepted;
  t.teardown(() => {
    client.destroy();
    peer.destroy();
  });

  server.pause();
  const sentAt = Date.now();
  const outcome = store.counting.consume(spec, DAY).then(
    (r) => r.kind,
    (err: unknown) => (isGatewayError(err, 'STORE_UNAVAILABLE') ? '503' : String(err)),
  );
  // In the poll phase: Redis thaws and runs the call well before its deadline, and the loop is
  // held past the timeout while the reply waits in the socket. The turn before was held past the
  // timeout check's interval (50 ms), so the check runs in this turn's check phase.
  peer.once('data', () => {
    server.resume();
    busyUntil(sentAt + TIMEOUT_MS + 300);
  });
  await sleep(TIMEOUT_MS - 400);
  busyUntil(Date.now() + 80);
  setImmediate(() => client.write('x'));
  const kind = await outcome;
  const counted = (await store.counting.usage(a.id, spec.periodId)) - 1;
  // Late timers on a busy machine (the thaw after the timeout) make it a 503 counting nothing.
  t.comment(`answered ${kind} ${Date.now() - sentAt} ms after it was sent`);
  t.equal(counted, kind === 'ok' ? 1 : 0, 'counted exactly when answered ok');
});

// Spins in Redis for ARGV[1] ms: the connection that sent it gets its reply after, and so does
// every call Redis ran before it in the same turn of its event loop.
const SPIN = `local function now() local t = redis.call('TIME') return t[1] * 1000 + t[2] / 1000 end
local stop = now() + tonumber(ARGV[1]) while now() < stop do end return 1`;

t.test('a call Redis ran in time but replied to after its timeout is given back: its 503 counts nothing', async (t) => {
  const server = await startRedis(t);
  const store = new RedisStore(
    { url: server.url, key_prefix: 'late:', command_timeout_ms: TIMEOUT_MS, connect_timeout_ms: scaled(2000) },
    log,
  );
  const other = new Redis(server.url);
  t.teardown(async () => {
    other.disconnect();
    await store.close();
  });
  const a = storedAccount({ label: 'late' });
  await store.accounts.createAccount(a);
  const spec = consumeSpec(a, { limit: 1_000_000 });
  await waitFor("Redis' clock", () => store.clockKnown(), scaled(5000));
  await other.ping();
  t.equal((await store.counting.consume(spec, DAY)).kind, 'ok');

  server.pause();
  // The stop takes effect a moment after the signal: a call sent at once was sometimes run before it.
  await sleep(100);
  const sentAt = Date.now();
  const outcome = store.counting.consume(spec, DAY).then(
    (r) => r.kind,
    (err: unknown) => (isGatewayError(err, 'STORE_UNAVAILABLE') ? '503' : String(err)),
  );
  // Redis thaws 250 ms before the call's timeout and runs it first (its socket was ready first),
  // then the spin of another client: the call's reply is written 700 ms later, after the timeout.
  await sleep(TIMEOUT_MS - 300);
  const spun = other.eval(SPIN, 0, '700');
  await sleep(50);
  server.resume();
  const kind = await outcome;
  const ms = Date.now() - sentAt;
  await spun;
  t.comment(`answered ${kind} ${ms} ms after it was sent`);
  const expected = 1 + (kind === 'ok' ? 1 : 0);
  await waitFor(
    'the counter to hold what was served',
    async () => (await store.counting.usage(a.id, spec.periodId)) === expected,
    5000,
  );
  t.pass(`counted ${expected}: exactly the requests answered ok`);
});
