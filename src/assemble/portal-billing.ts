import { StripeSessions } from '../billing/stripe-sessions.js';
import type { Config } from '../config/config-schema.js';
import { GatewayError } from '../failures.js';
import type { PlanFacts, PortalBilling } from '../features/portal/deps.js';
import type { AccountStore, StripeStore } from '../store/store.js';
import { isTerminal } from '../store/stripe/subscription.js';

/**
 * The plan section's dependencies (features/portal/plan-section.ts): the account's plan as
 * configured, and Stripe Checkout when `billing.stripe.checkout` is on (STRIPE_API_KEY).
 */
export function portalPlanDeps(
  config: Config,
  accounts: Pick<AccountStore, 'getAccount'>,
  stripeStore: Pick<StripeStore, 'stripeSubscription'>,
  env: NodeJS.ProcessEnv = process.env,
): { planFacts(accountId: string): Promise<PlanFacts | null>; billing: PortalBilling | null } {
  const planFacts = async (id: string): Promise<PlanFacts | null> => {
    const a = await accounts.getAccount(id);
    if (a === null) return null;
    const p = config.plans[a.plan];
    const sub = config.billing.stripe.checkout ? await stripeStore.stripeSubscription(id) : null;
    return {
      plan: a.plan,
      limit: a.limit ?? p?.limit ?? null,
      period: p?.period ?? 'monthly',
      trial_days: p?.period === 'trial' ? p.trial_days : null,
      burst: a.burst ?? p?.burst ?? null,
      customer: a.external_ids?.stripe_customer ?? null,
      subscribed: sub !== null && !isTerminal(sub.status),
    };
  };
  const stripe = config.billing.stripe;
  if (!stripe.checkout) return { planFacts, billing: null };
  const key = env.STRIPE_API_KEY ?? '';
  if (key === '')
    throw new GatewayError(
      'CONFIG_INVALID',
      'billing.stripe.checkout is on: set STRIPE_API_KEY (a restricted key that may create Checkout and customer-portal sessions and read prices)',
    );
  const sessions = new StripeSessions(stripe, key);
  return {
    planFacts,
    billing: {
      offers: Object.entries(stripe.plans).map(([price, plan]) => ({
        price,
        plan,
        limit: config.plans[plan]?.limit ?? null,
      })),
      checkout: (o) => sessions.checkout(o),
      manage: (customer, returnUrl) => sessions.manage(customer, returnUrl),
    },
  };
}
