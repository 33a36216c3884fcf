import { z } from 'zod';
import type { SubscriptionRecord, SubscriptionState } from './subscription.js';

export type { SubscriptionRecord, SubscriptionState } from './subscription.js';

/** A Stripe event received and verified, kept until the mirror has applied it. */
export const inboxItem = z.strictObject({
  /** Stripe's event id (`evt_…`): what a second delivery is known by. */
  id: z.string(),
  type: z.string(),
  /** The event as Stripe signed it. */
  body: z.string(),
  received_ms: z.number(),
  attempts: z.number().int().nonnegative(),
  /** Not taken again before this (a claim, or a retry's delay). */
  due_ms: z.number(),
});
export type InboxItem = z.infer<typeof inboxItem>;

/** An event the mirror could not apply to an account, and why (`GET /admin/billing/stripe/unmatched`). */
export const unmatchedEntry = z.strictObject({
  event_id: z.string(),
  event_type: z.string(),
  account_id: z.string().nullable(),
  customer: z.string().nullable(),
  subscription_id: z.string().nullable(),
  /** The price's lookup_key (else id), when the reason is that it maps to no plan. */
  price: z.string().nullable(),
  reason: z.string(),
  at: z.string(),
});
export type UnmatchedEntry = z.infer<typeof unmatchedEntry>;

/** How long an event id is remembered: a second delivery within it is dropped. */
export const STRIPE_EVENT_KEEP_MS = 30 * 86_400_000;
/** Unmatched entries listed, newest first. */
export const UNMATCHED_KEPT = 200;

/**
 * The Stripe mirror's state (docs/billing.md "Plans bought in Stripe"): the inbox of verified
 * events, written before the webhook is answered and applied from there; each account's
 * subscription as last applied; the customers' accounts; the timers of grace and period ends;
 * the unmatched list. Proven for every backend by test/store/contract/stripe.ts.
 */
export interface StripeStore {
  /**
   * Adds the event to the inbox unless its id was received in the last STRIPE_EVENT_KEEP_MS:
   * atomic, so two gateways given the same event keep it once. True when new.
   */
  stripeReceive(item: InboxItem): Promise<boolean>;
  /** Up to `max` items due at `nowMs`, oldest first, each not due again before `nowMs + leaseMs`. */
  stripeClaim(nowMs: number, leaseMs: number, max: number): Promise<InboxItem[]>;
  /** Applied (or given up): out of the inbox. Its id is still remembered. */
  stripeSettle(id: string): Promise<void>;
  /** Not applied this time: taken again from `dueMs`. */
  stripeDefer(id: string, dueMs: number): Promise<void>;
  /** Items in the inbox. */
  stripeInboxDepth(): Promise<number>;
  stripeSubscription(accountId: string): Promise<SubscriptionRecord | null>;
  /**
   * The order rule (subscription.ts `advanced`), atomic for the account: the new record when
   * `state` is newer than the one held, the held one when its event was applied before
   * (`again`), null when older (nothing changes).
   */
  stripeAdvance(
    accountId: string,
    state: SubscriptionState,
    nowMs: number,
  ): Promise<{ record: SubscriptionRecord; applied: 'new' | 'again' } | null>;
  /** Notes whether the mirror holds the account inactive for non-payment; only while the record is from `eventId`. */
  stripeMarkSuspended(accountId: string, eventId: string, suspended: boolean): Promise<void>;
  /** The account a Stripe customer belongs to, as the mirror linked it. */
  stripeCustomerAccount(customer: string): Promise<string | null>;
  stripeLinkCustomer(customer: string, accountId: string): Promise<void>;
  /** When the mirror must look at the account again (grace or period end); null: never. */
  stripeSetTimer(accountId: string, dueMs: number | null): Promise<void>;
  /** Accounts whose timer is due at `nowMs`. */
  stripeDueTimers(nowMs: number): Promise<string[]>;
  stripeAddUnmatched(entry: UnmatchedEntry): Promise<void>;
  /** Newest first, at most UNMATCHED_KEPT. */
  stripeUnmatched(): Promise<UnmatchedEntry[]>;
}
