import type { Test } from 'tap';
import { type OutboxEvent, outboxEvent } from '../../../src/events/event.js';
import { alertsFor } from '../../../src/quota/thresholds.js';
import { encodeThresholds } from '../../../src/store/counting/lua.js';
import { ENDPOINT_CONCURRENCY } from '../../../src/store/events/interface.js';
import type { Endpoint, Store } from '../../../src/store/store.js';
import { waitFor } from '../../helpers/wait.js';
import { account, spec } from './fixtures.js';

// The day every consume of these tests is counted on (the ledger's, not what they test).
const DAY = '2026-11-25';

let seq = 0;
const endpoint = (over: Partial<Endpoint> = {}): Endpoint => ({
  id: `wh_${process.pid}_${++seq}`,
  url: 'https://receiver.example/hook',
  events: ['usage.threshold', 'prices.published'],
  account_id: null,
  description: null,
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  previous_secret: null,
  previous_until_ms: null,
  created_via: 'operator',
  created_at: '2026-11-01T00:00:00.000Z',
  ...over,
});
const event = (type: OutboxEvent['type'], accountId: string | null = null): OutboxEvent =>
  outboxEvent(`msg_${process.pid}_${++seq}`, type, { n: seq }, Date.now(), accountId);

/**
 * The events contract (store/events/interface.ts): endpoints, the outbox and its claims, and the
 * usage.threshold crossing the counting store records. Every backend runs it unchanged.
 */
export function eventsContract(t: Test, make: () => Promise<Store>): void {
  t.test('an endpoint is stored, listed, read back and deleted', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const e = endpoint();
    await store.events.putEndpoint(e);
    t.same(await store.events.getEndpoint(e.id), e);
    t.ok((await store.events.listEndpoints()).some((x) => x.id === e.id));
    t.equal(await store.events.deleteEndpoint(e.id), true);
    t.equal(await store.events.getEndpoint(e.id), null);
    t.equal(await store.events.deleteEndpoint(e.id), false, 'a second delete finds none');
  });

  t.test('an event is fanned out to matching endpoints once, whoever offers it how often', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const all = endpoint({ events: ['prices.published', 'usage.threshold'] });
    const mine = endpoint({ events: ['usage.threshold', 'prices.published'], account_id: 'acct_a' });
    const other = endpoint({ events: ['usage.threshold'], account_id: 'acct_b' });
    const pricesOnly = endpoint({ events: ['prices.cancelled'] });
    for (const e of [all, mine, other, pricesOnly]) await store.events.putEndpoint(e);
    const usage = event('usage.threshold', 'acct_a');
    const prices = event('prices.published');
    t.equal(await store.events.enqueueEvent(usage), true);
    t.equal(await store.events.enqueueEvent(usage), false, 'the same id again adds nothing');
    t.equal(await store.events.enqueueEvent(prices), true);
    const claimed = await store.events.claimDeliveries('h1', Date.now(), 60_000, 100);
    const got = claimed.map((c) => `${c.delivery.event_id}>${c.endpoint.id}`).sort();
    t.same(
      got,
      [`${usage.id}>${all.id}`, `${usage.id}>${mine.id}`, `${prices.id}>${all.id}`, `${prices.id}>${mine.id}`].sort(),
      'usage events reach unscoped endpoints and those of the account; price events every subscriber',
    );
    const c = claimed[0];
    t.equal(c?.delivery.attempts, 0);
    t.equal(c?.delivery.state, 'pending');
    t.ok(c?.delivery.body.startsWith('{"type":'), 'the body is kept as it is signed');
    t.same((await store.events.outboxStats()).depth, 4);
  });

  t.test(
    'a claimed delivery is not claimed again until its lease runs out; then another holder takes it',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const e = endpoint();
      await store.events.putEndpoint(e);
      const ev = event('prices.published');
      await store.events.enqueueEvent(ev);
      const now = Date.now();
      const first = await store.events.claimDeliveries('h1', now, 1000, 10);
      t.equal(first.length, 1);
      t.same(await store.events.claimDeliveries('h2', now + 500, 1000, 10), [], 'not while the lease holds');
      const second = await store.events.claimDeliveries('h2', now + 1001, 1000, 10);
      t.equal(second.length, 1, 'taken over after the lease');
      const id = first[0]?.delivery.id as string;
      const outcome = {
        status: 200,
        error: null,
        delivered: true,
        nextAttemptMs: null,
        nowMs: now + 1100,
        ms: 12,
        answer: 'ok',
      };
      t.equal(
        await store.events.recordAttempt(id, 'h1', outcome),
        false,
        'the first holder lost it: its record is ignored',
      );
      t.equal(await store.events.recordAttempt(id, 'h2', outcome), true);
      const [listed] = await store.events.listDeliveries(e.id, 10);
      t.equal(listed?.state, 'delivered');
      t.equal(listed?.attempts, 1);
      t.equal(listed?.last_status, 200);
      t.equal(listed?.next_attempt_ms, null);
      t.same(await store.events.outboxStats(), { depth: 0, oldestMs: null }, 'nothing pending');
      t.same(
        await store.events.claimDeliveries('h3', now + 100_000, 1000, 10),
        [],
        'a delivered one is never due again',
      );
    },
  );

  t.test(
    'an endpoint has at most ENDPOINT_CONCURRENCY deliveries under claim, and its backlog does not stand in front of others',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const slow = endpoint({ events: ['prices.cancelled'] });
      const fast = endpoint({ events: ['prices.published'] });
      await store.events.putEndpoint(slow);
      await store.events.putEndpoint(fast);
      for (let i = 0; i < 5; i++) await store.events.enqueueEvent(event('prices.cancelled'));
      const later = event('prices.published');
      await store.events.enqueueEvent(later);
      const now = Date.now() + 10;
      const first = await store.events.claimDeliveries('h1', now, 60_000, 3);
      t.same(
        first.map((c) => c.endpoint.id),
        [slow.id, slow.id, fast.id],
        `${ENDPOINT_CONCURRENCY} of the slow endpoint, oldest first, then the other endpoint's`,
      );
      t.same(
        await store.events.claimDeliveries('h2', now, 60_000, 10),
        [],
        'the slow endpoint is at its bound, for any holder',
      );
      const done = first[0]?.delivery.id as string;
      const outcome = { status: 204, error: null, delivered: true, nextAttemptMs: null, nowMs: now, ms: 1, answer: '' };
      t.equal(await store.events.recordAttempt(done, 'h1', outcome), true);
      const next = await store.events.claimDeliveries('h2', now + 1, 60_000, 10);
      t.same(
        next.map((c) => c.endpoint.id),
        [slow.id],
        'an attempt recorded frees one claim',
      );
      const expired = await store.events.claimDeliveries('h3', now + 60_002, 60_000, 10);
      t.same(
        expired.map((c) => c.endpoint.id).sort(),
        [slow.id, slow.id, fast.id].sort(),
        'claims that ran out free theirs',
      );
      t.equal(await store.events.deleteEndpoint(slow.id), true);
      t.same(
        await store.events.outboxStats(),
        { depth: 1, oldestMs: later.created_ms },
        'its waiting deliveries went with it',
      );
    },
  );

  t.test('a failed attempt is due again at its next attempt; after the last it is failed and listed', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const e = endpoint();
    await store.events.putEndpoint(e);
    await store.events.enqueueEvent(event('prices.published'));
    const now = Date.now();
    const [c] = await store.events.claimDeliveries('h', now, 60_000, 10);
    const id = c?.delivery.id as string;
    await store.events.recordAttempt(id, 'h', {
      status: 500,
      error: 'status 500',
      delivered: false,
      nextAttemptMs: now + 5000,
      nowMs: now,
      ms: 40,
      answer: 'oops',
    });
    const [pending] = await store.events.listDeliveries(e.id, 10);
    t.equal(pending?.next_attempt_ms, now + 5000);
    t.equal(pending?.last_error, 'status 500');
    t.same(await store.events.claimDeliveries('h', now + 4999, 60_000, 10), [], 'not before its time');
    const [again] = await store.events.claimDeliveries('h', now + 5000, 60_000, 10);
    t.equal(again?.delivery.attempts, 1);
    await store.events.recordAttempt(id, 'h', {
      status: null,
      error: 'timeout',
      delivered: false,
      nextAttemptMs: null,
      nowMs: now + 5001,
      ms: 1000,
      answer: '',
    });
    const [failed] = await store.events.listDeliveries(e.id, 10);
    t.equal(failed?.state, 'failed');
    t.equal(failed?.attempts, 2);
    t.equal(failed?.last_status, null);
    t.equal((await store.events.outboxStats()).depth, 0);
  });

  t.test('a test event goes only to its endpoint; deleting an endpoint drops its deliveries', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = endpoint();
    const b = endpoint();
    await store.events.putEndpoint(a);
    await store.events.putEndpoint(b);
    await store.events.enqueueEvent(event('webhook.test'), a.id);
    t.equal((await store.events.listDeliveries(a.id, 10)).length, 1);
    t.equal((await store.events.listDeliveries(b.id, 10)).length, 0);
    t.equal((await store.events.outboxStats()).depth, 1);
    await store.events.deleteEndpoint(a.id);
    t.equal((await store.events.outboxStats()).depth, 0);
    t.same(await store.events.claimDeliveries('h', Date.now(), 1000, 10), []);
  });

  t.test(
    'usage.threshold: raised once per account, period and threshold, also after a refund and a recount',
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const e = endpoint({ events: ['usage.threshold'] });
      await store.events.putEndpoint(e);
      const a = account();
      await store.accounts.createAccount(a);
      const context = { plan: 'developer', period_started_at: 's', period_ends_at: 'e' };
      const alerts = () => alertsFor(10, [80, 100], context);
      t.equal(encodeThresholds(alerts()?.pending ?? []), '8:80,10:100');
      const s = spec(a, { limit: 10, alerts: alerts() });
      for (let i = 0; i < 8; i++) await store.counting.consume(s, DAY);
      await store.counting.refund(a.id, '1000', DAY);
      await store.counting.consume(s, DAY);
      // A copy that has not seen the crossing (another gateway) still sends the threshold.
      const fresh = spec(a, { limit: 10, alerts: alerts() });
      await store.counting.consume(fresh, DAY);
      for (let i = 0; i < 5; i++) await store.counting.consume(s, DAY);
      let events: string[] = [];
      await waitFor('two threshold deliveries', async () => {
        events = (await store.events.listDeliveries(e.id, 100)).map((x) => x.body);
        return events.length >= 2;
      });
      const bodies = events.map((b) => JSON.parse(b) as { type: string; data: Record<string, unknown> });
      t.same(bodies.map((b) => b.data['threshold_percent']).sort(), [100, 80], 'one event for 80% and one for 100%');
      const at80 = bodies.find((b) => b.data['threshold_percent'] === 80);
      t.same(at80?.data, {
        account_id: a.id,
        plan: 'developer',
        threshold_percent: 80,
        requests_used: 8,
        request_limit: 10,
        period_started_at: 's',
        period_ends_at: 'e',
      });
      t.equal(
        encodeThresholds(s.alerts?.pending ?? []),
        '',
        'a copy that saw both crossings sends no threshold any more',
      );
      // A marker: another account's crossing, raised after everything above. Once its delivery is
      // listed, anything the consumptions above raised would be too.
      const b = account();
      await store.accounts.createAccount(b);
      const other = spec(b, { limit: 10, alerts: alerts() });
      for (let i = 0; i < 8; i++) await store.counting.consume(other, DAY);
      const deliveries = async () =>
        (await store.events.listDeliveries(e.id, 100)).map(
          (x) => JSON.parse(x.body) as { data: Record<string, unknown> },
        );
      await waitFor('the marker delivery', async () => (await deliveries()).some((d) => d.data['account_id'] === b.id));
      t.equal((await deliveries()).filter((d) => d.data['account_id'] === a.id).length, 2, 'still two');
    },
  );

  t.test('usage.threshold: a limit lowered below a threshold mid-period still raises it', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const e = endpoint({ events: ['usage.threshold'] });
    await store.events.putEndpoint(e);
    const a = account();
    await store.accounts.createAccount(a);
    const context = { plan: 'developer', period_started_at: 's', period_ends_at: 'e' };
    for (let i = 0; i < 5; i++) await store.counting.consume(spec(a, { limit: 100 }), DAY);
    await store.counting.consume(spec(a, { limit: 4, alerts: alertsFor(4, [80, 100], context) }), DAY);
    await waitFor('two threshold deliveries', async () => (await store.events.listDeliveries(e.id, 100)).length === 2);
    t.pass('both thresholds raised at the first request after the change');
  });
}
