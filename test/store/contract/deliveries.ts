import type { Test } from 'tap';
import { outboxEvent } from '../../../src/events/event.js';
import { ATTEMPTS_KEPT } from '../../../src/store/events/interface.js';
import type { AttemptOutcome, Endpoint, Store } from '../../../src/store/store.js';

let seq = 0;
const endpoint = (accountId: string | null): Endpoint => ({
  id: `wh_log_${process.pid}_${++seq}`,
  url: 'https://receiver.example/hook',
  events: ['key.created'],
  account_id: accountId,
  description: null,
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  previous_secret: null,
  previous_until_ms: null,
  created_via: 'operator',
  created_at: '2026-11-01T00:00:00.000Z',
});
const keyEvent = (accountId: string) =>
  outboxEvent(`msg_log_${process.pid}_${++seq}`, 'key.created', { n: seq }, Date.now(), accountId);
const failed = (nowMs: number, next: number | null, answer: string): AttemptOutcome => ({
  status: 500,
  error: 'status 500',
  delivered: false,
  nextAttemptMs: next,
  nowMs,
  ms: 25,
  answer,
});

/**
 * What the portal's webhooks stand on (store/events/interface.ts): an account's endpoints listed
 * apart, each delivery's log of attempts (bounded), and a replay. Every backend runs it unchanged.
 */
export function deliveriesContract(t: Test, make: () => Promise<Store>): void {
  t.test("an account's endpoints are listed apart from the others'", async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const [a, b, operator] = [endpoint('acct_log_a'), endpoint('acct_log_b'), endpoint(null)];
    for (const e of [a, b, operator]) await store.events.putEndpoint(e);
    t.same(
      (await store.events.listEndpoints('acct_log_a')).map((e) => e.id),
      [a.id],
    );
    t.same((await store.events.listEndpoints('acct_none')).length, 0);
    t.same((await store.events.listEndpoints()).map((e) => e.id).sort(), [a.id, b.id, operator.id].sort());
  });

  t.test('an endpoint keeps who made it: read, listed, added for an account and claimed alike', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const operator = endpoint('acct_via');
    const portal = { ...endpoint('acct_via'), created_via: 'portal' as const, account_id: 'acct_via' };
    await store.events.putEndpoint(operator);
    t.equal(await store.events.addAccountEndpoint(portal, 10), true);
    t.equal((await store.events.getEndpoint(portal.id))?.created_via, 'portal');
    t.equal((await store.events.getEndpoint(operator.id))?.created_via, 'operator');
    const listed = await store.events.listEndpoints('acct_via');
    t.same(
      new Map(listed.map((e) => [e.id, e.created_via])),
      new Map([
        [operator.id, 'operator'],
        [portal.id, 'portal'],
      ]),
    );
    await store.events.enqueueEvent(keyEvent('acct_via'));
    const claimed = await store.events.claimDeliveries('h_via', Date.now(), 60_000, 100);
    const via = new Map(claimed.map((c) => [c.endpoint.id, c.endpoint.created_via]));
    t.equal(via.get(portal.id), 'portal', 'the worker is handed who made it');
    t.equal(via.get(operator.id), 'operator');
  });

  t.test("an account's endpoints added at once never pass its bound", async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    await store.events.putEndpoint(endpoint('acct_log_e'));
    await store.events.putEndpoint(endpoint('acct_log_other'));
    await store.events.putEndpoint(endpoint(null));
    const added = await Promise.all(
      Array.from({ length: 8 }, () =>
        store.events.addAccountEndpoint({ ...endpoint('acct_log_e'), account_id: 'acct_log_e' }, 4),
      ),
    );
    t.equal(added.filter(Boolean).length, 3, 'three more beside the one it had');
    t.equal((await store.events.listEndpoints('acct_log_e')).length, 4);
    t.equal(
      await store.events.addAccountEndpoint({ ...endpoint('acct_log_other'), account_id: 'acct_log_other' }, 4),
      true,
      "another account's are its own",
    );
  });

  t.test(
    `a delivery keeps its latest ${ATTEMPTS_KEPT} attempts: when, status, duration and the answer's start`,
    async (t) => {
      const store = await make();
      t.teardown(() => store.close());
      const e = endpoint('acct_log_c');
      await store.events.putEndpoint(e);
      await store.events.enqueueEvent(keyEvent('acct_log_c'));
      const start = Date.now();
      let id = '';
      for (let i = 0; i < ATTEMPTS_KEPT + 2; i++) {
        const now = start + i * 1000;
        const [c] = await store.events.claimDeliveries('h', now, 500, 10);
        id = c?.delivery.id as string;
        t.ok(await store.events.recordAttempt(id, 'h', failed(now + 100, now + 1000, `<p>answer ${i}</p>`)));
      }
      const [d] = await store.events.listDeliveries(e.id, 10);
      t.equal(d?.attempts, ATTEMPTS_KEPT + 2, 'every attempt counted');
      t.equal(d?.log.length, ATTEMPTS_KEPT, 'the log is bounded');
      t.same(d?.log[0], {
        at_ms: start + 2000 + 75,
        status: 500,
        ms: 25,
        answer: '<p>answer 2</p>',
        error: 'status 500',
      });
      t.equal(d?.log.at(-1)?.answer, `<p>answer ${ATTEMPTS_KEPT + 1}</p>`, 'oldest first, the latest last');
    },
  );

  t.test('a replay makes a finished delivery due again, once; one under claim is left to its holder', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const e = endpoint('acct_log_d');
    await store.events.putEndpoint(e);
    await store.events.enqueueEvent(keyEvent('acct_log_d'));
    const now = Date.now();
    const [c] = await store.events.claimDeliveries('h1', now, 60_000, 10);
    const id = c?.delivery.id as string;
    t.equal(await store.events.replayDelivery(id, now + 1), true, 'under claim: it is being attempted');
    t.same(await store.events.claimDeliveries('h2', now + 2, 60_000, 10), [], 'and not claimed twice');
    const done = { status: 204, error: null, delivered: true, nextAttemptMs: null, nowMs: now + 5, ms: 3, answer: '' };
    t.ok(await store.events.recordAttempt(id, 'h1', done));
    t.same(await store.events.claimDeliveries('h2', now + 10, 60_000, 10), [], 'delivered: not due');
    t.equal(await store.events.replayDelivery(id, now + 20), true);
    const [listed] = await store.events.listDeliveries(e.id, 10);
    t.equal(listed?.state, 'pending');
    t.equal(listed?.next_attempt_ms, now + 20);
    t.equal((await store.events.outboxStats()).depth, 1, 'pending again');
    const again = await store.events.claimDeliveries('h2', now + 20, 60_000, 10);
    t.same(
      again.map((x) => x.delivery.id),
      [id],
      'claimed once for the replay',
    );
    t.ok(await store.events.recordAttempt(id, 'h2', { ...done, nowMs: now + 30 }));
    const [replayed] = await store.events.listDeliveries(e.id, 10);
    t.equal(replayed?.state, 'delivered');
    t.equal(replayed?.attempts, 2);
    t.equal(replayed?.log.length, 2, 'the replay is a new attempt in the log');
    t.equal(await store.events.replayDelivery(`msg_none.${e.id}`, now), false, 'no such delivery');
    await store.events.deleteEndpoint(e.id);
    t.equal(await store.events.replayDelivery(id, now + 40), false, 'gone with its endpoint');
  });
}
