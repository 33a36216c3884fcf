import type { Config } from '../config/schema.js';
import type { Account } from '../store/types.js';
import { monthlyPeriod, trialPeriod, type Period } from './period.js';

/** Where an account stands at a moment: which plan applies, its allowance and current period. */
export interface Allowance {
  plan: string;
  limit: number;
  period: Period;
}

/**
 * Works out the allowance for an account at `nowMs`. A trial plan that names `converts_to`
 * switches to that plan when its first trial period ends, with the billing cycle anchored there.
 * Throws when the config no longer knows the account's plan or no limit applies (an enterprise
 * account created without one): the request fails as an internal error rather than going unmetered.
 */
export function allowanceFor(account: Account, plans: Config['plans'], zone: string, nowMs: number): Allowance {
  const anchorMs = Date.parse(account.anchor);
  let name = account.plan;
  let plan = plans[name];
  if (!plan) throw new Error(`account ${account.id} has plan "${name}", which the config does not define`);
  let period: Period;
  if (plan.period === 'trial') {
    period = trialPeriod(anchorMs, nowMs, zone, plan.trial_days);
    const next = plan.converts_to;
    if (next !== undefined && period.startMs > anchorMs) {
      const firstEnd = trialPeriod(anchorMs, anchorMs, zone, plan.trial_days).endMs;
      name = next;
      plan = plans[next];
      if (!plan) throw new Error(`plan "${account.plan}" converts to "${next}", which the config does not define`);
      period = plan.period === 'trial' ? trialPeriod(firstEnd, nowMs, zone, plan.trial_days) : monthlyPeriod(firstEnd, nowMs, zone);
    }
  } else {
    period = monthlyPeriod(anchorMs, nowMs, zone);
  }
  const limit = account.limit ?? plan.limit;
  if (limit === undefined) throw new Error(`account ${account.id} on plan "${name}" has no limit`);
  return { plan: name, limit, period };
}
