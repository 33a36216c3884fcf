/**
 * What a subscription's state does to its account (docs/billing.md "The state table"): pure, so
 * an event and a timer that falls due decide alike, and a state applied twice changes nothing
 * the second time.
 */
import type { StripeBillingConfig } from '../config/stripe-config.js';
import type { Account, AccountStatus, SubscriptionRecord } from '../store/store.js';
import { isTerminal } from '../store/stripe/subscription.js';

export interface Effect {
  /** The plan the account should have; null: leave it. */
  plan: string | null;
  /** The status it should have; null: leave it. */
  status: AccountStatus | null;
  /** Whether the mirror holds it inactive for non-payment from now on. */
  suspended: boolean;
  /** When to look again (grace or period end); null: not until the next event. */
  timerMs: number | null;
  /** Why nothing could be applied (listed as unmatched), or null. */
  unmatched: string | null;
}

const DAY_MS = 86_400_000;

export function effectOf(
  r: SubscriptionRecord,
  account: Account,
  cfg: Pick<StripeBillingConfig, 'plans' | 'free_plan' | 'grace_days'>,
  nowMs: number,
): Effect {
  const mapped = r.price === null ? undefined : cfg.plans[r.price];
  // Only while the mark the mirror left is on it: an operator who enabled the account since, and
  // disabled it again, disabled it for a reason of their own.
  const lift: AccountStatus | null =
    r.suspended && account.status === 'inactive' && account.status_reason === 'unpaid' ? 'active' : null;
  const none: Effect = { plan: null, status: null, suspended: r.suspended, timerMs: null, unmatched: null };
  if (isTerminal(r.status)) {
    // Paid until the period's end: the plan stays until then.
    if (r.period_end_ms !== null && r.period_end_ms > nowMs) return { ...none, timerMs: r.period_end_ms };
    return { plan: cfg.free_plan, status: lift, suspended: false, timerMs: null, unmatched: null };
  }
  const unmapped =
    r.price === null ? null : mapped === undefined ? `price "${r.price}" is in no billing.stripe.plans mapping` : null;
  if (r.status === 'active' || r.status === 'trialing') {
    if (mapped === undefined) return { ...none, unmatched: unmapped };
    return { plan: mapped, status: lift, suspended: false, timerMs: null, unmatched: null };
  }
  if (r.status === 'past_due' || r.status === 'unpaid') {
    const graceEnd = (r.past_due_since_ms ?? nowMs) + cfg.grace_days * DAY_MS;
    const plan = mapped ?? null;
    // An account an operator disabled stays theirs to enable: only one made inactive here is lifted here.
    const active = account.status === 'active';
    if (nowMs >= graceEnd)
      return {
        plan,
        status: active ? 'inactive' : null,
        suspended: r.suspended || active,
        timerMs: null,
        unmatched: unmapped,
      };
    return { ...none, plan, timerMs: graceEnd, unmatched: unmapped };
  }
  // incomplete, paused: nothing is paid for yet, or nothing is served; the account stays as it is.
  return none;
}
