/**
 * A verified Stripe event, read for what the mirror needs: who, which subscription, which
 * state. Read leniently (Stripe adds fields in every API version; the period end moved from the
 * subscription to its items in 2025-03-31), with zod, once, here.
 */
import { z } from 'zod';
import type { SubscriptionState } from '../store/store.js';

/** An id, or the object it names expanded. */
const ref = z.union([z.string(), z.looseObject({ id: z.string() }).transform((o) => o.id)]).nullish();
const price = z.looseObject({ id: z.string(), lookup_key: z.string().nullish() }).nullish();

const subscription = z.looseObject({
  id: z.string(),
  customer: ref,
  status: z.string(),
  current_period_end: z.number().nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  items: z
    .looseObject({
      data: z.array(z.looseObject({ price, current_period_end: z.number().nullish() })),
    })
    .nullish(),
});

const invoice = z.looseObject({
  customer: ref,
  subscription: ref,
  parent: z.looseObject({ subscription_details: z.looseObject({ subscription: ref }).nullish() }).nullish(),
  lines: z
    .looseObject({
      data: z.array(z.looseObject({ price, period: z.looseObject({ end: z.number() }).nullish() })),
    })
    .nullish(),
});

const checkoutSession = z.looseObject({
  client_reference_id: z.string().nullish(),
  customer: ref,
  subscription: ref,
});

const envelope = z.looseObject({
  id: z.string(),
  type: z.string(),
  created: z.number().int(),
  data: z.looseObject({ object: z.unknown() }),
});

/** What an event asks of the mirror. */
export type Happening =
  | { kind: 'checkout'; accountId: string | null; customer: string | null }
  /** `account`: the account the subscription's metadata names (`fpg_account`, set by the portal's checkout). */
  | { kind: 'subscription'; state: SubscriptionState; account: string | null }
  | { kind: 'ignored' };

/** The metadata key the portal's Checkout Session puts on the subscription: the account it is for. */
export const ACCOUNT_METADATA = 'fpg_account';

const priceName = (p: z.infer<typeof price>): string | null => (p ? (p.lookup_key ?? p.id) : null);

/** An event of a type the mirror handles, read; `ignored` for any other type. Throws on a malformed one. */
export function happeningOf(body: string): { id: string; type: string; happening: Happening } {
  const e = envelope.parse(JSON.parse(body));
  const base = { event_id: e.id, event_type: e.type, event_created: e.created };
  const object = e.data.object;
  const out = (happening: Happening) => ({ id: e.id, type: e.type, happening });
  switch (e.type) {
    case 'checkout.session.completed': {
      const s = checkoutSession.parse(object);
      return out({ kind: 'checkout', accountId: s.client_reference_id ?? null, customer: s.customer ?? null });
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const s = subscription.parse(object);
      const item = s.items?.data[0];
      const end = item?.current_period_end ?? s.current_period_end ?? null;
      return out({
        kind: 'subscription',
        account: s.metadata?.[ACCOUNT_METADATA] ?? null,
        state: {
          ...base,
          subscription_id: s.id,
          customer: s.customer ?? null,
          status: e.type === 'customer.subscription.deleted' ? 'canceled' : s.status,
          price: priceName(item?.price),
          period_end_ms: end === null ? null : end * 1000,
        },
      });
    }
    case 'invoice.paid':
    case 'invoice.payment_failed': {
      const i = invoice.parse(object);
      const sub = i.parent?.subscription_details?.subscription ?? i.subscription ?? null;
      // An invoice of no subscription (a one-off) changes no plan.
      if (sub === null) return out({ kind: 'ignored' });
      const line = i.lines?.data[0];
      const end = line?.period?.end ?? null;
      return out({
        kind: 'subscription',
        account: null,
        state: {
          ...base,
          subscription_id: sub,
          customer: i.customer ?? null,
          status: e.type === 'invoice.paid' ? 'active' : 'past_due',
          price: priceName(line?.price),
          period_end_ms: end === null ? null : end * 1000,
        },
      });
    }
    default:
      return out({ kind: 'ignored' });
  }
}
