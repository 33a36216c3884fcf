import pino from 'pino';
import t from 'tap';
import { isGatewayError } from '../../src/failures.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import type { ConsumeSpec, StoredAccount, StoreEvent } from '../../src/store/store.js';
import { consumeSpec, storedAccount } from '../helpers/accounts.js';
import { startRedis } from '../helpers/redis.js';
import { answers, scaled, waitFor } from '../helpers/wait.js';
import { DAY, hashOf } from './contract/fixtures.js';

const COMMAND_TIMEOUT_MS = 500;
const server = await startRedis(t);
const log = pino({ level: 'silent' });
const options = {
  url: server.url,
  key_prefix: 'faults:',
  command_timeout_ms: COMMAND_TIMEOUT_MS,
  connect_timeout_ms: 1000,
};
const store = new RedisStore(options, log);
t.teardown(() => store.close());
const events: StoreEvent[] = [];
store.coordination.subscribe((e) => events.push(e));

const account = (): StoredAccount => storedAccount({ label: 'faults' });
const spec = (a: StoredAccount): ConsumeSpec => consumeSpec(a);

/** How long the call took to reject, and whether it rejected as STORE_UNAVAILABLE. */
async function failure(call: () => Promise<unknown>): Promise<{ ms: number; unavailable: boolean }> {
  const start = Date.now();
  const err: unknown = await call().then(
    () => null,
    (e: unknown) => e,
  );
  return { ms: Date.now() - start, unavailable: isGatewayError(err, 'STORE_UNAVAILABLE') };
}

t.test('while Redis is down every call rejects with STORE_UNAVAILABLE in under a second', async (t) => {
  const a = account();
  await store.accounts.createAccount(a);
  await server.stop();
  const calls: Record<string, () => Promise<unknown>> = {
    consume: () => store.counting.consume(spec(a), DAY),
    findByKeyHash: () => store.accounts.findByKeyHash(hashOf(a)),
    ping: () => store.ping(),
  };
  for (const [name, call] of Object.entries(calls)) {
    const { ms, unavailable } = await failure(call);
    t.ok(unavailable, `${name} rejects with STORE_UNAVAILABLE`);
    t.ok(ms < scaled(1000), `${name} rejected in ${ms} ms`);
  }
});

t.test('when Redis is back the same store works again by itself, and caches are told to resync', async (t) => {
  events.length = 0;
  await server.start();
  await waitFor('the store', answers(store), 5000);
  const a = account();
  await store.accounts.createAccount(a);
  t.same(await store.counting.consume(spec(a), DAY), { kind: 'ok', used: 1 });
  await waitFor('the store', async () => events.some((e) => e.type === 'account' && e.id === '*'), 3000);
  t.ok(
    events.some((e) => e.type === 'prices'),
    'prices are reloaded too',
  );
});

t.test('a stalled Redis fails a command within about command_timeout_ms', async (t) => {
  await store.ping();
  await server.cli('CLIENT', 'PAUSE', '1000', 'ALL');
  const { ms, unavailable } = await failure(() => store.counting.consume(spec(account()), DAY));
  t.ok(unavailable, 'STORE_UNAVAILABLE');
  t.ok(ms >= COMMAND_TIMEOUT_MS - 50 && ms < COMMAND_TIMEOUT_MS + scaled(300), `rejected after ${ms} ms`);
  // The late reply to the abandoned command must not be taken for the answer to a later one.
  await waitFor('the store', answers(store), 3000);
  const a = account();
  await store.accounts.createAccount(a);
  t.same(await store.counting.consume(spec(a), DAY), { kind: 'ok', used: 1 });
});

t.test('a store created while Redis is down fails fast and connects once Redis is up', async (t) => {
  await server.stop();
  const late = new RedisStore({ ...options, key_prefix: 'late:' }, log);
  t.teardown(() => late.close());
  const first = await failure(() => late.ping());
  t.ok(first.unavailable && first.ms < scaled(1500), `first call waited ${first.ms} ms for a connection, then gave up`);
  const { ms, unavailable } = await failure(() => late.ping());
  t.ok(unavailable && ms < scaled(100), `later calls reject at once (${ms} ms)`);
  await server.start();
  await waitFor(
    'the store',
    () =>
      late.ping().then(
        () => true,
        () => false,
      ),
    5000,
  );
  t.pass('connected');
});

t.test('a data-loss check that times out on a busy Redis is tried again until it can tell', async (t) => {
  const lines: string[] = [];
  const seen = pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) });
  const s = new RedisStore({ ...options, key_prefix: 'loss:', command_timeout_ms: 200 }, seen);
  t.teardown(() => s.close());
  // The check's SET and GET go out on the connection's 'ready', before any later ping.
  await waitFor('the store', answers(s), 5000);
  await waitFor('the marker', async () => (await server.cli('GET', 'loss:marker')).trim() !== '', 3000);
  await s.ping();
  // The data is lost while writes are held: the check on the reconnect times out.
  await server.cli('DEL', 'loss:marker');
  await server.cli('CLIENT', 'PAUSE', String(scaled(2000)), 'WRITE');
  await server.cli('CLIENT', 'KILL', 'TYPE', 'normal');
  await waitFor('a marker check that failed', async () => lines.some((l) => l.includes('could not check')), 5000);
  await waitFor('the loss found', async () => s.msSinceDataLoss() !== null, scaled(10_000));
  t.ok(
    lines.some((l) => l.includes('redis lost its data')),
    'the loss is logged',
  );
  t.equal(lines.filter((l) => l.includes('could not check')).length, 1, 'the failing checks logged once');
});
