import type { Config, PlanConfig } from '../config/config-schema.js';
import type { BurstLimit } from '../config/plan-config.js';
import type { Account, Grant } from '../store/store.js';
import { monthlyPeriod, type Period, trialPeriod } from './period.js';

/** Where an account stands at a moment: which plan applies, its allowance and current period. */
export interface Allowance {
  plan: string;
  /** The period's limit: the plan's (or the account's) plus the period's grants. */
  limit: number;
  /** Requests granted in the current period (0 when none): `limit - granted` is the limit before grants. */
  granted: number;
  period: Period;
  /** Whether a trial has converted: `plan` then differs from the account's stored plan. */
  converted: boolean;
  /** Where the current plan's periods are counted from: the account's anchor, or the trial's end. */
  anchorMs: number;
  /**
   * What the period's count may reach: the limit plus the overage (a percent of the limit,
   * rounded down), or the limit itself when no overage applies.
   */
  cap: number;
  /** The cap on requests per sliding window, or null for none. */
  burst: BurstLimit | null;
}

/**
 * Works out the allowance for an account at `nowMs`. A trial plan that names `converts_to`
 * switches to that plan when its first trial period ends, with the billing cycle anchored there
 * and that plan's limit (a per-account limit set on a trial is for the trial). The grants made
 * in the current period add to its limit; those of other periods are over.
 * An account's own burst and overage apply over its plan's, whichever plan that is; the overage
 * is a percent of the limit with the grants.
 * Throws when the config no longer knows the account's plan or no limit applies (an enterprise
 * account created without one): the request fails as an internal error rather than going unmetered.
 */
export function allowanceFor(
  account: Pick<Account, 'id' | 'plan' | 'limit' | 'anchor' | 'burst' | 'overage'> & { grants?: Grant[] },
  plans: Config['plans'],
  zone: string,
  nowMs: number,
): Allowance {
  const anchorMs = Date.parse(account.anchor);
  let name = account.plan;
  let plan = Object.hasOwn(plans, name) ? plans[name] : undefined;
  if (!plan) throw new Error(`account ${account.id} has plan "${name}", which the config does not define`);
  if (plan.period === 'monthly')
    return withLimit(name, plan, account.limit ?? plan.limit, monthlyPeriod(anchorMs, nowMs, zone), false, anchorMs);
  const period = trialPeriod(anchorMs, nowMs, zone, plan.trial_days);
  const next = plan.converts_to;
  if (next === undefined || period.startMs <= anchorMs)
    return withLimit(name, plan, account.limit ?? plan.limit, period, false, anchorMs);
  const firstEnd = trialPeriod(anchorMs, anchorMs, zone, plan.trial_days).endMs;
  name = next;
  plan = Object.hasOwn(plans, next) ? plans[next] : undefined;
  if (!plan) throw new Error(`plan "${account.plan}" converts to "${next}", which the config does not define`);
  const converted =
    plan.period === 'trial'
      ? trialPeriod(firstEnd, nowMs, zone, plan.trial_days)
      : monthlyPeriod(firstEnd, nowMs, zone);
  return withLimit(name, plan, plan.limit, converted, true, firstEnd);

  function withLimit(
    name: string,
    plan: PlanConfig,
    limit: number | undefined,
    period: Period,
    converted: boolean,
    anchor: number,
  ): Allowance {
    if (limit === undefined) throw new Error(`account ${account.id} on plan "${name}" has no limit`);
    let granted = 0;
    for (const g of account.grants ?? []) if (g.period_id === period.id) granted += g.requests;
    const effective = limit + granted;
    const overage = account.overage ?? plan.overage;
    const cap = overage === undefined ? effective : effective + Math.floor((effective * overage.max_percent) / 100);
    const burst = account.burst ?? plan.burst ?? null;
    return { plan: name, limit: effective, granted, period, converted, anchorMs: anchor, cap, burst };
  }
}
