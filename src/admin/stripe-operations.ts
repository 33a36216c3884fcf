/** The Stripe mirror for operators (docs/billing.md "Plans bought in Stripe"): each account's subscription, and what could not be applied. */
import type { StripeBillingConfig } from '../config/stripe-config.js';
import { GatewayError } from '../failures.js';
import type { AccountStore, StripeStore, SubscriptionRecord, UnmatchedEntry } from '../store/store.js';

/** An account's subscription as the mirror last applied it. */
export interface SubscriptionView {
  id: string;
  customer: string | null;
  status: string;
  /** The price's lookup_key (else id), and the plan it maps to (null: unmapped). */
  price: string | null;
  plan: string | null;
  current_period_end: string | null;
  /** While past due: when it became so, and when its grace ends. */
  past_due_since: string | null;
  grace_ends_at: string | null;
  /** Whether the mirror holds the account inactive for non-payment. */
  suspended: boolean;
  last_event: { id: string; type: string; created: string; applied_at: string };
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export class StripeOperations {
  constructor(
    private readonly stripe: StripeStore,
    private readonly accounts: Pick<AccountStore, 'getAccount'>,
    private readonly cfg: StripeBillingConfig,
  ) {}

  /** For `GET /admin/accounts/:id`: its subscription, or null when the mirror holds none. */
  async summary(accountId: string): Promise<{ stripe_subscription: SubscriptionView | null }> {
    const r = await this.stripe.stripeSubscription(accountId);
    return { stripe_subscription: r === null ? null : this.view(r) };
  }

  /** `billing stripe-status ACCOUNT`: the account's Stripe customer and subscription. */
  async status(accountId: string): Promise<{
    account_id: string;
    plan: string;
    status: string;
    stripe_customer: string | null;
    stripe_subscription: SubscriptionView | null;
  }> {
    const a = await this.accounts.getAccount(accountId);
    if (a === null) throw new GatewayError('NOT_FOUND', `no account with id ${accountId}`);
    return {
      account_id: a.id,
      plan: a.plan,
      status: a.status,
      stripe_customer: a.external_ids?.stripe_customer ?? null,
      ...(await this.summary(accountId)),
    };
  }

  async unmatched(): Promise<{ unmatched: UnmatchedEntry[] }> {
    return { unmatched: await this.stripe.stripeUnmatched() };
  }

  private view(r: SubscriptionRecord): SubscriptionView {
    const graceEnd = r.past_due_since_ms === null ? null : r.past_due_since_ms + this.cfg.grace_days * 86_400_000;
    return {
      id: r.subscription_id,
      customer: r.customer,
      status: r.status,
      price: r.price,
      plan: r.price === null ? null : (this.cfg.plans[r.price] ?? null),
      current_period_end: iso(r.period_end_ms),
      past_due_since: iso(r.past_due_since_ms),
      grace_ends_at: iso(graceEnd),
      suspended: r.suspended,
      last_event: {
        id: r.event_id,
        type: r.event_type,
        created: new Date(r.event_created * 1000).toISOString(),
        applied_at: r.applied_at,
      },
    };
  }
}
