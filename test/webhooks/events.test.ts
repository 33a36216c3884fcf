import { join } from 'node:path';
import t from 'tap';
import { isPublicAddress } from '../../src/events/addresses.js';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { startGateway } from '../helpers/gateway.js';
import { startOrigin } from '../helpers/origin.js';
import { region as prices } from '../helpers/prices.js';
import { startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

const FAST = {
  allow_private_addresses: true,
  allow_http: true,
  retry_delays_ms: [100, 100],
  poll_interval_ms: 50,
  timeout_ms: 1000,
};
// 2026-11-23 10:00 in Johannesburg: the shipped history's current set is 2026-09-02.
const NOW = Date.parse('2026-11-23T08:00:00Z');
// Petrol 93 moves with 95: a change has a delta in both.
const region = (p95: string) => prices(p95, { petrol_93: p95, diesel_500ppm: '19.90' });
const set = (date: string, p95: string) => ({ effective_date: date, coastal: region(p95), inland: region(p95) });

t.test('publish, schedule, cancel and take effect (manual clock): one event each', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, { webhooks: FAST, demo_accounts: false }, { clock });
  const receiver = await startReceiver(t);
  const events = ['prices.published', 'prices.effective', 'prices.cancelled'];
  const { body: ep } = await adminCall(gw, 'POST', '/admin/webhooks', { url: receiver.url, events });
  // "Nothing more arrived" is proved by a marker sent afterwards: a set scheduled far ahead, whose
  // prices.published comes after anything raised before it.
  const MARKERS = new Set<string>();
  const marker = async (date: string): Promise<void> => {
    MARKERS.add(date);
    t.equal((await adminCall(gw, 'PUT', '/admin/prices', set(date, '26.00'))).body.status, 'scheduled');
    await waitFor(`the marker ${date}`, () => receiver.got.some((g) => g.event?.data['effective_date'] === date));
  };
  t.equal((await adminCall(gw, 'PUT', '/admin/prices', set('2026-12-02', '24.10'))).body.status, 'scheduled');
  t.equal((await adminCall(gw, 'PUT', '/admin/prices', set('2026-12-09', '25.00'))).body.status, 'scheduled');
  t.equal((await adminCall(gw, 'DELETE', '/admin/prices/2026-12-09')).status, 200);
  // Effective at 00:01 in Johannesburg on its date; every timer on the way fires.
  clock.advanceTo(Date.parse('2026-12-01T22:01:00Z') + 1000);
  await waitFor('four events', () => receiver.got.length >= 4);
  await marker('2027-01-13');
  t.equal(receiver.verified(ep.secret).length, receiver.got.length, 'every delivery verifies');
  // Delivery is at least once: a clock jumping days ahead can expire the claim of an attempt in
  // flight, and a receiver drops a second copy by its webhook-id. One event each is one id each.
  const byId = new Map(receiver.verified(ep.secret).map((g) => [g.headers['webhook-id'], g]));
  const got = [...byId.values()].filter((g) => !MARKERS.has(g.event.data['effective_date'] as string));
  t.same(got.map((g) => `${g.event.type} ${g.event.data['effective_date']}`).sort(), [
    'prices.cancelled 2026-12-09',
    'prices.effective 2026-12-02',
    'prices.published 2026-12-02',
    'prices.published 2026-12-09',
  ]);
  const published = got.find((g) => g.event.type === 'prices.published');
  t.match(published?.event.data, {
    effective_date: '2026-12-02',
    source: String,
    coastal: { petrol_95: '24.10' },
    inland: { petrol_95: '24.10' },
  });
  t.equal(new Set(got.map((g) => g.headers['webhook-id'])).size, 4, 'four distinct ids');
  // The same clock passing again (a reload, another announcement) tells nothing new.
  await adminCall(gw, 'PUT', '/admin/prices', set('2026-12-02', '24.10'));
  clock.advance(60_000);
  await marker('2027-01-20');
  t.equal(receiver.got.filter((g) => g.event.type === 'prices.effective').length, 1, 'prices.effective once');
});

t.test("the origin poller's new set raises prices.published, once", async (t) => {
  const origin = await startOrigin(t);
  const gw = await startGateway(t, {
    webhooks: FAST,
    upstream: { url: origin.url, api_key: origin.key, poll_interval_ms: 200, timeout_ms: 400 },
  });
  const receiver = await startReceiver(t);
  const { body: ep } = await adminCall(gw, 'POST', '/admin/webhooks', {
    url: receiver.url,
    events: ['prices.published'],
  });
  await waitFor('a first poll', () => origin.polls() >= 1);
  origin.setPrice('31.23');
  await waitFor('the event', () =>
    receiver.got.some((g) => (g.event.data['inland'] as { petrol_95?: string })?.petrol_95 === '31.23'),
  );
  await waitFor('more polls of the unchanged set', () => origin.polls() >= 6);
  const changed = receiver
    .verified(ep.secret)
    .filter((g) => (g.event.data['inland'] as { petrol_95?: string })?.petrol_95 === '31.23');
  // Events, not deliveries: one answered past the 1 s timeout on a busy machine is sent again,
  // with the same id (at least once).
  t.equal(
    new Set(changed.map((g) => g.headers['webhook-id'])).size,
    1,
    'one prices.published for the new set, none for the polls that found it unchanged',
  );
  t.equal(changed[0]?.event.type, 'prices.published');
});

t.test('the outbox of the memory store survives a restart: a delivery pending is sent by the next run', async (t) => {
  const file = join(tempDir('fpg-outbox-'), 'state.json');
  const receiver = await startReceiver(t);
  receiver.mode = { status: 503 };
  const settings = {
    webhooks: { ...FAST, retry_delays_ms: [200, 200, 200, 200, 200, 200] },
    store: { memory: { file } },
  };
  const first = await startGateway(t, settings);
  const { body: ep } = await adminCall(first, 'POST', '/admin/webhooks', {
    url: receiver.url,
    events: ['prices.published'],
  });
  const { body: sent } = await adminCall(first, 'POST', `/admin/webhooks/${ep.id}/test`);
  await waitFor('a failed attempt', () => receiver.got.length >= 1);
  await first.app.close();
  receiver.mode = { status: 200 };
  const second = await startGateway(t, settings);
  await waitFor(
    'delivered by the second run',
    () => receiver.verified(ep.secret).filter((g) => g.headers['webhook-id'] === sent.event_id).length >= 2,
  );
  await waitFor('recorded', async () => {
    const { body } = await adminCall(second, 'GET', `/admin/webhooks/${ep.id}/deliveries`);
    return body.deliveries[0]?.state === 'delivered';
  });
  t.pass('the event enqueued before the restart was delivered after it, under the same webhook-id');
});

t.test('the address is checked at every delivery: an endpoint stored while allowed is refused when not', async (t) => {
  const file = join(tempDir('fpg-ssrf-'), 'state.json');
  const receiver = await startReceiver(t);
  const allowed = await startGateway(t, { webhooks: FAST, store: { memory: { file } } });
  const { body: ep } = await adminCall(allowed, 'POST', '/admin/webhooks', {
    url: receiver.url.replace('127.0.0.1', 'localhost'),
    events: ['prices.published'],
  });
  t.equal(ep.url.includes('localhost'), true);
  await allowed.app.close();
  const strict = await startGateway(t, {
    webhooks: { ...FAST, allow_private_addresses: false, retry_delays_ms: [60_000] },
    store: { memory: { file } },
  });
  await adminCall(strict, 'POST', `/admin/webhooks/${ep.id}/test`);
  await waitFor('recorded', async () => {
    const { body } = await adminCall(strict, 'GET', `/admin/webhooks/${ep.id}/deliveries`);
    return body.deliveries[0]?.attempts === 1;
  });
  const { body } = await adminCall(strict, 'GET', `/admin/webhooks/${ep.id}/deliveries`);
  t.match(body.deliveries[0].last_error, /^refused: localhost resolves to (127\.0\.0\.1|::1)/);
  t.equal(receiver.got.length, 0, 'nothing reached the receiver');
});

t.test(
  'refused addresses: loopback, private, link-local, CGNAT, metadata, unspecified, multicast, mapped',
  async (t) => {
    for (const a of [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:169.254.169.254',
      '::ffff:10.0.0.1',
      'not-an-ip',
    ])
      t.equal(isPublicAddress(a), false, a);
    for (const a of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])
      t.equal(isPublicAddress(a), true, a);
  },
);
