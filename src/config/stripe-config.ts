/** `billing.stripe`: Stripe subscriptions mirrored into account plans (docs/billing.md). */
import { z } from 'zod';
import { posInt } from './fields.js';

export const stripeBilling = z.strictObject({
  plans: z
    .record(z.string().min(1).max(200), z.string().min(1))
    .default({})
    .describe(
      "A Stripe Price's lookup_key (or price id) → the plan an active subscription to it gives, e.g. {fuel_starter_monthly: starter}",
    ),
  free_plan: z
    .string()
    .min(1)
    .default('developer')
    .describe('The plan an account returns to when its subscription ends (at the period end Stripe reports)'),
  grace_days: posInt
    .max(60, 'expected at most 60')
    .default(3)
    .describe(
      'Days a past_due subscription keeps its plan; then the account is made inactive until an invoice is paid',
    ),
  unpaid_message: z
    .string()
    .min(1)
    .max(500)
    .default('Your subscription payment is overdue. Update your payment method to continue.')
    .describe('Why an account made inactive for non-payment is refused (the 403 message)'),
  checkout: z
    .boolean()
    .default(false)
    .describe(
      "The portal's plan page offers each mapped plan through Stripe Checkout, and a customer-portal link (env STRIPE_API_KEY)",
    ),
  api_base: z
    .string()
    .url('expected a URL such as https://api.stripe.com')
    .refine((u) => /^https?:\/\//.test(u), 'expected http:// or https://')
    .default('https://api.stripe.com')
    .describe("Where the stripe package sends Checkout and customer-portal requests (a proxy, or a test's receiver)"),
});
export type StripeBillingConfig = z.infer<typeof stripeBilling>;

/** Each mapping and the free plan must name a configured plan: `config check` names the field. */
export function stripePlanIssues(
  stripe: StripeBillingConfig,
  plans: Record<string, { limit?: number | undefined }>,
): Array<{ path: Array<string | number>; message: string }> {
  const issues = Object.entries(stripe.plans).flatMap(([price, plan]) => {
    const path = ['billing', 'stripe', 'plans', price];
    if (!(plan in plans)) return [{ path, message: `unknown plan "${plan}"` }];
    // A subscription gives the plan's own allowance: an account's own limit is not Stripe's to set.
    if (plans[plan]?.limit === undefined) return [{ path, message: `plan "${plan}" has no default limit to give` }];
    return [];
  });
  if (!(stripe.free_plan in plans))
    issues.push({ path: ['billing', 'stripe', 'free_plan'], message: `unknown plan "${stripe.free_plan}"` });
  return issues;
}
