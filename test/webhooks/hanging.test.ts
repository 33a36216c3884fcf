import { createServer, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { region as prices } from '../helpers/prices.js';
import { startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Hanging receivers hold only their own deliveries: many endpoints whose receiver accepts the
 * connection and never answers, and one healthy endpoint registered after them. The healthy
 * one's delivery must arrive well within the delivery timeout (20 s), on both stores.
 */

const TIMEOUT_MS = 20_000;
// Generous for a loaded machine; before the fix the healthy delivery waited for whole batches
// of hanging attempts to time out (a multiple of TIMEOUT_MS).
const BOUND_MS = 6_000;

const WEBHOOKS = {
  allow_private_addresses: true,
  allow_http: true,
  retry_delays_ms: [100, 100, 100],
  poll_interval_ms: 100,
  timeout_ms: TIMEOUT_MS,
};

// Petrol 93 moves with 95: a change has a delta in both.
const region = (p95: string) => prices(p95, { petrol_93: p95, diesel_500ppm: '19.90' });
const set = (date: string, p95: string) => ({ effective_date: date, coastal: region(p95), inland: region(p95) });

/** A real TCP receiver that accepts every connection, reads, and never answers. */
async function hangingServer(t: Test): Promise<{ port: number; open: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  let closed: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((r) => {
      server.close(() => r());
      for (const s of sockets) s.destroy();
    });
    return closed;
  };
  t.teardown(close);
  const { port } = server.address() as { port: number };
  return { port, open: () => sockets.size, close };
}

async function scenario(t: Test, gw: TestGateway, hanging: number): Promise<void> {
  const hang = await hangingServer(t);
  const healthy = await startReceiver(t);
  for (let i = 0; i < hanging; i++) {
    const r = await adminCall(gw, 'POST', '/admin/webhooks', {
      url: `http://127.0.0.1:${hang.port}/hang/${i}`,
      events: ['prices.published'],
    });
    t.equal(r.status, 201);
  }
  await adminCall(gw, 'POST', '/admin/webhooks', { url: healthy.url, events: ['prices.published'] });

  const start = Date.now();
  t.equal((await adminCall(gw, 'PUT', '/admin/prices', set('2027-03-03', '30.10'))).status, 201);
  const took = await waitFor('the healthy delivery', () => healthy.got.length >= 1, BOUND_MS);
  t.ok(took < BOUND_MS, `the healthy endpoint got its event after ${Date.now() - start} ms`);
  await waitFor('every hanging endpoint holds a connection', () => hang.open() >= hanging, BOUND_MS);

  // A second event while every hanging endpoint still holds its first: the healthy one is not
  // queued behind them, nor behind their deliveries already due.
  t.equal((await adminCall(gw, 'PUT', '/admin/prices', set('2027-03-10', '30.20'))).status, 201);
  await waitFor('the second healthy delivery', () => healthy.got.length >= 2, BOUND_MS);
  t.same(
    healthy.got.map((g) => g.event.data['effective_date']),
    ['2027-03-03', '2027-03-10'],
    'both events reached the healthy receiver',
  );
  // Each hanging endpoint is held to two attempts at a time, whatever is due for it.
  t.ok(hang.open() <= 2 * hanging, `${hang.open()} connections for ${hanging} hanging endpoints`);
  // Cut them now: the gateway's shutdown waits for attempts under way.
  await hang.close();
}

t.test('48 hanging receivers do not delay a healthy one (memory store)', async (t) => {
  const gw = await startGateway(t, { webhooks: WEBHOOKS, demo_accounts: false, log: { access: false } });
  await scenario(t, gw, 48);
});

t.test('64 hanging receivers do not delay a healthy one (Redis store)', async (t) => {
  const redis = await startRedis(t);
  const gw = await startGateway(t, {
    webhooks: WEBHOOKS,
    demo_accounts: false,
    log: { access: false },
    store: redis.store,
  });
  await scenario(t, gw, 64);
});
