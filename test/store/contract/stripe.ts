import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import type { InboxItem, Store, SubscriptionState } from '../../../src/store/store.js';

let seq = 0;
const unique = (what: string): string => `${what}${process.pid}_${++seq}_${randomBytes(3).toString('hex')}`;

async function opened(t: Test, make: () => Promise<Store>): Promise<Store> {
  const store = await make();
  t.teardown(() => store.close());
  return store;
}

const item = (over: Partial<InboxItem> = {}): InboxItem => ({
  id: unique('evt_'),
  type: 'customer.subscription.created',
  body: '{"id":"evt"}',
  received_ms: Date.now(),
  attempts: 0,
  due_ms: 0,
  ...over,
});

const state = (over: Partial<SubscriptionState> = {}): SubscriptionState => ({
  subscription_id: 'sub_1',
  customer: 'cus_1',
  status: 'active',
  price: 'fuel_starter_monthly',
  period_end_ms: 1_800_000_000_000,
  event_id: unique('evt_'),
  event_type: 'customer.subscription.updated',
  event_created: 1_764_000_000,
  ...over,
});

/**
 * The Stripe mirror's state: the inbox keeps an event id once and hands each item to one claimer
 * at a time; the order rule holds per account; the indexes and the unmatched list. Every backend.
 */
export function stripeContract(t: Test, make: () => Promise<Store>): void {
  t.test('stripe: an event id is kept once, however many gateways receive it at once', async (t) => {
    const { stripe } = await opened(t, make);
    const e = item();
    const answers = await Promise.all([stripe.stripeReceive(e), stripe.stripeReceive(e), stripe.stripeReceive(e)]);
    t.same(answers.sort(), [false, false, true]);
    t.equal(await stripe.stripeInboxDepth(), 1);
    await stripe.stripeSettle(e.id);
    t.equal(await stripe.stripeReceive(e), false, 'settled, its id is still remembered');
    t.equal(await stripe.stripeInboxDepth(), 0);
  });

  t.test('stripe: a claimed item is not claimed again until its claim runs out; deferred items wait', async (t) => {
    const { stripe } = await opened(t, make);
    const [a, b] = [item({ received_ms: 1 }), item({ received_ms: 2 })];
    await stripe.stripeReceive(a);
    await stripe.stripeReceive(b);
    const now = Date.now();
    const first = await stripe.stripeClaim(now, 5000, 10);
    t.same(
      first.map((i) => [i.id, i.attempts, i.due_ms]),
      [
        [a.id, 1, now + 5000],
        [b.id, 1, now + 5000],
      ],
    );
    t.same(await stripe.stripeClaim(now + 4999, 5000, 10), [], 'both under claim');
    await stripe.stripeDefer(a.id, now + 60_000);
    const again = await stripe.stripeClaim(now + 5000, 5000, 10);
    t.same(
      again.map((i) => [i.id, i.attempts]),
      [[b.id, 2]],
      'the claim of b ran out; a waits for its retry',
    );
    t.equal(again[0]?.body, b.body);
    await stripe.stripeSettle(b.id);
    t.same(
      (await stripe.stripeClaim(now + 60_000, 5000, 10)).map((i) => i.id),
      [a.id],
    );
  });

  t.test('stripe: the order rule keeps the newest state of an account, and an ended subscription ended', async (t) => {
    const { stripe } = await opened(t, make);
    const acct = unique('acct_');
    const created = state({ event_created: 100, event_type: 'customer.subscription.created' });
    const upgraded = state({ event_created: 200, price: 'fuel_business_monthly' });
    t.equal((await stripe.stripeAdvance(acct, upgraded, 1))?.applied, 'new');
    t.equal(await stripe.stripeAdvance(acct, created, 2), null, 'an older event changes nothing');
    t.equal((await stripe.stripeAdvance(acct, upgraded, 3))?.applied, 'again', 'the same event again');
    const pastDue = state({ event_created: 200, status: 'past_due', price: null });
    const r = await stripe.stripeAdvance(acct, pastDue, 4);
    t.match(r?.record, { status: 'past_due', price: 'fuel_business_monthly', past_due_since_ms: 200_000 });
    const ended = state({ event_created: 300, status: 'canceled' });
    t.equal((await stripe.stripeAdvance(acct, ended, 5))?.applied, 'new');
    t.equal(await stripe.stripeAdvance(acct, state({ event_created: 400 }), 6), null, 'the subscription stays ended');
    t.equal(
      (await stripe.stripeAdvance(acct, state({ subscription_id: 'sub_2', event_created: 400 }), 7))?.applied,
      'new',
      'a new subscription',
    );
    const replaced = state({ subscription_id: 'sub_0', event_created: 450, status: 'canceled' });
    t.equal(await stripe.stripeAdvance(acct, replaced, 7), null, "another subscription's end keeps the live one");
    const held = await stripe.stripeSubscription(acct);
    t.equal(held?.subscription_id, 'sub_2');
    await stripe.stripeMarkSuspended(acct, 'evt_other', true);
    t.equal((await stripe.stripeSubscription(acct))?.suspended, false, 'only for the state it was decided on');
    await stripe.stripeMarkSuspended(acct, held?.event_id as string, true);
    t.equal((await stripe.stripeSubscription(acct))?.suspended, true);
    t.equal(await stripe.stripeSubscription(unique('acct_')), null);

    // One second, one status: the subscription's event over an invoice's, whichever came first.
    const paid = state({ subscription_id: 'sub_3', event_created: 500, event_type: 'invoice.paid', price: null });
    const made = state({ subscription_id: 'sub_3', event_created: 500, event_type: 'customer.subscription.created' });
    t.equal((await stripe.stripeAdvance(acct, paid, 8))?.applied, 'new');
    t.match((await stripe.stripeAdvance(acct, made, 9))?.record, { price: 'fuel_starter_monthly' }, 'the price given');
    t.equal(await stripe.stripeAdvance(acct, { ...paid, event_id: unique('evt_') }, 10), null, 'not taken back');
  });

  t.test('stripe: concurrent states of one account: the newest is held', async (t) => {
    const { stripe } = await opened(t, make);
    const acct = unique('acct_');
    const states = Array.from({ length: 12 }, (_, i) => state({ event_created: 1000 + i }));
    await Promise.all([...states].reverse().map((s, i) => stripe.stripeAdvance(acct, s, i)));
    t.equal((await stripe.stripeSubscription(acct))?.event_id, states[11]?.event_id);
  });

  t.test('stripe: customers, timers and the unmatched list', async (t) => {
    const { stripe } = await opened(t, make);
    const [acct, cus] = [unique('acct_'), unique('cus_')];
    t.equal(await stripe.stripeCustomerAccount(cus), null);
    await stripe.stripeLinkCustomer(cus, acct);
    t.equal(await stripe.stripeCustomerAccount(cus), acct);
    await stripe.stripeSetTimer(acct, 1000);
    await stripe.stripeSetTimer('other', 5000);
    t.same(await stripe.stripeDueTimers(999), []);
    t.same(await stripe.stripeDueTimers(1000), [acct]);
    await stripe.stripeSetTimer(acct, null);
    t.same(await stripe.stripeDueTimers(10_000), ['other']);
    const entry = (n: number) => ({
      event_id: `evt_${n}`,
      event_type: 'customer.subscription.created',
      account_id: acct,
      customer: cus,
      subscription_id: 'sub_1',
      price: 'gold',
      reason: 'price "gold" is in no billing.stripe.plans mapping',
      at: '2026-11-29T07:00:00.000Z',
    });
    await stripe.stripeAddUnmatched(entry(1));
    await stripe.stripeAddUnmatched(entry(2));
    t.same(await stripe.stripeUnmatched(), [entry(2), entry(1)], 'newest first');
  });
}
