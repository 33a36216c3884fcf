/**
 * The Stripe subscription an account holds, as the mirror last applied it, and the order rule
 * that decides whether an event's state replaces it (docs/billing.md "The order rule"). Pure,
 * so the memory store applies it in one synchronous step and the Redis store under a
 * compare-and-set of the record: both backends decide alike.
 */
import { z } from 'zod';

export const subscriptionRecord = z.strictObject({
  subscription_id: z.string(),
  customer: z.string().nullable(),
  /** Stripe's status: active, trialing, past_due, unpaid, canceled, incomplete, incomplete_expired, paused. */
  status: z.string(),
  /** The price's lookup_key, else its id; null when the event named none (an invoice without lines). */
  price: z.string().nullable(),
  /** The current period's end Stripe reports, unix ms. */
  period_end_ms: z.number().nullable(),
  /** The event that gave this state: its id, type and `created` (unix seconds). */
  event_id: z.string(),
  event_type: z.string(),
  event_created: z.number().int(),
  /** When the subscription became past due (the `created` of the event that said so, ms), while it is. */
  past_due_since_ms: z.number().nullable(),
  /** Set while the mirror holds the account inactive for non-payment, so it alone lifts it. */
  suspended: z.boolean(),
  applied_at: z.string(),
});
export type SubscriptionRecord = z.infer<typeof subscriptionRecord>;

/** A state an event reports, before the rule weighs it against the one held. */
export type SubscriptionState = Omit<SubscriptionRecord, 'past_due_since_ms' | 'suspended' | 'applied_at'>;

const TERMINAL = new Set(['canceled', 'incomplete_expired']);
/**
 * Within one second (`created` has no finer grain), the later of two states in a subscription's
 * life: a subscription ends once, and a failed payment comes after the payment period began.
 */
const RANK: Record<string, number> = {
  incomplete: 0,
  trialing: 1,
  active: 2,
  paused: 3,
  past_due: 4,
  unpaid: 5,
  incomplete_expired: 6,
  canceled: 6,
};
const rankOf = (status: string): number => RANK[status] ?? 0;
export const isTerminal = (status: string): boolean => TERMINAL.has(status);

/**
 * An invoice says only "paid" or "failed"; the subscription's own event also names its price.
 * Stripe sends `invoice.paid` in the same second as the `customer.subscription.created` or
 * `.updated` of a checkout or an upgrade, in either order: the subscription's must not lose.
 */
const fromSubscription = (type: string): number => (type.startsWith('customer.subscription.') ? 1 : 0);

/**
 * Whether `next` is newer than `held`: a later `created`; in the same second a later status, then
 * the subscription's own event over an invoice's, then (undecidable from the events: two updates
 * in one second) the greater event id, so every order of delivery ends alike.
 * A subscription that ended stays ended: no state of the same subscription replaces it.
 */
export function isNewer(held: SubscriptionRecord | null, next: SubscriptionState): boolean {
  if (held === null) return true;
  const same = held.subscription_id === next.subscription_id;
  if (same && isTerminal(held.status) && !isTerminal(next.status)) return false;
  // Another subscription's end (one the customer replaced, however late it is reported) never
  // ends the plan of the subscription the account holds live.
  if (!same && !isTerminal(held.status) && isTerminal(next.status)) return false;
  if (next.event_created !== held.event_created) return next.event_created > held.event_created;
  const rank = rankOf(next.status) - rankOf(held.status);
  if (rank !== 0) return rank > 0;
  const source = fromSubscription(next.event_type) - fromSubscription(held.event_type);
  if (source !== 0) return source > 0;
  return next.event_id > held.event_id;
}

/**
 * What the store holds after an event: the new record when the event is newer, the held one
 * unchanged when the event was applied before (its id), null when the event is older.
 */
export function advanced(
  held: SubscriptionRecord | null,
  next: SubscriptionState,
  nowMs: number,
): { record: SubscriptionRecord; applied: 'new' | 'again' } | null {
  if (held !== null && held.event_id === next.event_id) return { record: held, applied: 'again' };
  if (!isNewer(held, next)) return null;
  const same = held !== null && held.subscription_id === next.subscription_id;
  const overdue = next.status === 'past_due' || next.status === 'unpaid';
  const record: SubscriptionRecord = {
    ...next,
    // An invoice names no price: the subscription's stays.
    price: next.price ?? (same ? held.price : null),
    period_end_ms: next.period_end_ms ?? (same ? held.period_end_ms : null),
    customer: next.customer ?? (same ? held.customer : null),
    past_due_since_ms: overdue
      ? same && held.past_due_since_ms !== null
        ? held.past_due_since_ms
        : next.event_created * 1000
      : null,
    suspended: held?.suspended ?? false,
    applied_at: new Date(nowMs).toISOString(),
  };
  return { record, applied: 'new' };
}
