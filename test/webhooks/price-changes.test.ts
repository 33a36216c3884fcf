import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type GatewayProcess, gatewayProcess } from '../helpers/cli.js';
import { region as prices } from '../helpers/prices.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

// Its tests share nothing and spend most of their time waiting: they run 2 at a time.
t.jobs = 2;

/**
 * Every change of what is current or scheduled raises exactly one price event, even when it
 * brings back content seen before (publish, cancel, publish again; A, B, A); the same change
 * made through several gateways is still one event. Real gateway processes, a real receiver.
 */

const WEBHOOKS = {
  allow_private_addresses: true,
  allow_http: true,
  timeout_ms: 2000,
  poll_interval_ms: 100,
  retry_delays_ms: [200, 200, 200],
};

// Petrol 93 moves with 95: a change has a delta in both.
const region = (p95: string) => prices(p95, { petrol_93: p95, diesel_500ppm: '19.90' });
// With its `updated_at`, so publishing it again is the identical set.
const set = (date: string, p95: string) => ({
  effective_date: date,
  updated_at: '2026-11-20 10:00:00',
  coastal: region(p95),
  inland: region(p95),
});

async function admin(gw: GatewayProcess, method: string, path: string, body?: unknown) {
  const r = await fetch(`${gw.admin}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: r.status, body: (await r.json()) as any };
}

async function gateways(t: Test, store: Record<string, unknown>, n: number): Promise<GatewayProcess[]> {
  const file = join(tempDir('fpg-price-changes-'), 'gateway.json');
  writeFileSync(file, JSON.stringify({ store, log: { access: false }, demo_accounts: false, webhooks: WEBHOOKS }));
  return Promise.all(Array.from({ length: n }, () => gatewayProcess(t, file)));
}

const told = (r: Receiver, secret: string) =>
  r
    .verified(secret)
    .map((g) => `${g.event.type} ${g.event.data['effective_date']} ${(g.event.data['coastal'] as any)?.petrol_95}`);

/** Publishes a marker and waits for its event: whatever the changes before it raised has arrived by then. */
async function settle(t: Test, gw: GatewayProcess, receiver: Receiver, secret: string): Promise<void> {
  t.equal((await admin(gw, 'PUT', '/admin/prices', set('2027-12-01', '99.99'))).status, 201);
  await waitFor('the marker event', () => told(receiver, secret).includes('prices.published 2027-12-01 99.99'));
}

async function scenario(t: Test, gws: GatewayProcess[]): Promise<void> {
  const at = (i: number) => gws[i % gws.length] as GatewayProcess;
  const receiver = await startReceiver(t);
  const ep = (
    await admin(at(0), 'POST', '/admin/webhooks', {
      url: receiver.url,
      events: ['prices.published', 'prices.cancelled'],
    })
  ).body;

  // Case 1: publish, cancel, publish the identical set again.
  const first = await admin(at(0), 'PUT', '/admin/prices', set('2027-01-06', '30.00'));
  t.match(first, { status: 201, body: { status: 'scheduled' } });
  t.equal((await admin(at(1), 'DELETE', '/admin/prices/2027-01-06')).status, 200);
  const again = await admin(at(2), 'PUT', '/admin/prices', set('2027-01-06', '30.00'));
  t.match(again, { status: 201, body: { status: 'scheduled' } });

  // Case 2: A, then B, then A again (a revert).
  for (const [i, p95] of ['31.00', '32.00', '31.00'].entries())
    t.equal((await admin(at(i), 'PUT', '/admin/prices', set('2027-01-13', p95))).status, 201);
  // Not a change: the set it holds, published again, through every gateway at once.
  await Promise.all(gws.map((gw) => admin(gw, 'PUT', '/admin/prices', set('2027-01-13', '31.00'))));

  await settle(t, at(0), receiver, ep.secret);
  const got = told(receiver, ep.secret);
  t.equal(got.length, receiver.got.length, 'every delivery verifies');
  t.same(
    got.filter((e) => !e.includes('2027-12-01')).sort(),
    [
      'prices.cancelled 2027-01-06 30.00',
      'prices.published 2027-01-06 30.00',
      'prices.published 2027-01-06 30.00',
      'prices.published 2027-01-13 31.00',
      'prices.published 2027-01-13 31.00',
      'prices.published 2027-01-13 32.00',
    ],
    'one event per change: the set published again after its cancel, and the revert to A',
  );
  t.equal(new Set(receiver.got.map((g) => g.headers['webhook-id'])).size, receiver.got.length, 'distinct ids');
}

t.test(
  'memory store, one gateway process: a republish after a cancel and a revert each raise their event',
  async (t) => {
    // Not t.testdir(): tap removes that before the teardown that stops the gateway writing there.
    const dir = tempDir('fpg-price-changes-');
    await scenario(t, await gateways(t, { type: 'memory', memory: { file: join(dir, 'state.json') } }, 1));
  },
);

t.test('Redis, three gateway processes: one event per change, whichever gateway makes it', async (t) => {
  const redis = await startRedis(t);
  await scenario(t, await gateways(t, redis.store, 3));
});
