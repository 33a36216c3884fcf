import { z } from 'zod';
import { posInt } from './fields.js';

/**
 * The most a burst limit may count: the Redis store rewrites (and replicates) the account's log
 * of admission times whole with each admission, 16 bytes an entry (counting/lua.ts BURST).
 */
export const MAX_BURST_LIMIT = 1000;

/** A cap on requests per sliding window, over all of an account's keys (docs/plans.md). */
export const burstLimit = z.strictObject({
  limit: posInt.max(MAX_BURST_LIMIT, `expected at most ${MAX_BURST_LIMIT}`).describe('Requests admitted per window'),
  window_s: z
    .number()
    .int()
    .min(1, 'expected at least 1')
    .max(3600, 'expected at most 3600')
    .describe('Length of the sliding window in seconds'),
});

/** How far past its allowance an account may go, in percent of the allowance (a soft limit). */
export const overage = z.strictObject({
  max_percent: z
    .number()
    .int()
    .min(1, 'expected at least 1')
    .max(1000, 'expected at most 1000')
    .describe('Requests allowed past the allowance, in percent of it; counted like any other'),
});

export type BurstLimit = z.infer<typeof burstLimit>;
export type Overage = z.infer<typeof overage>;

export const plan = z
  .strictObject({
    limit: posInt.optional().describe('Requests per period; without it each account of the plan carries its own limit'),
    period: z
      .enum(['trial', 'monthly'])
      .describe("trial: windows of trial_days from the account's start; monthly: billing cycles from its anchor"),
    trial_days: posInt.default(14).describe('Length of a trial period in calendar days'),
    // A trial plan may convert to another plan when its first trial period ends.
    converts_to: z
      .string()
      .optional()
      .describe(
        "A trial plan becomes this plan when its first trial period ends (monthly from then, that plan's limit)",
      ),
    alert_thresholds: z
      .array(z.number().int().min(1, 'expected at least 1').max(1100, 'expected at most 1100'))
      .default([80, 100])
      .describe(
        'Percent of the allowance at which a usage.threshold webhook event is raised, once per account and period; above 100 only with overage',
      ),
    burst: burstLimit.optional().describe("Sliding-window cap on the account's requests (all its keys); none: no cap"),
    overage: overage.optional().describe('Requests past the allowance that still succeed; none: a hard limit'),
  })
  .superRefine((p, ctx) => {
    // A threshold past what the plan's overage lets usage reach would never be raised.
    const reach = 100 + (p.overage?.max_percent ?? 0);
    for (const [i, t] of p.alert_thresholds.entries())
      if (t > reach)
        ctx.addIssue({
          code: 'custom',
          path: ['alert_thresholds', i],
          message:
            p.overage === undefined
              ? "expected at most 100 (above 100 needs the plan's overage)"
              : `expected at most ${reach} (100 plus the plan's overage.max_percent)`,
        });
  });
