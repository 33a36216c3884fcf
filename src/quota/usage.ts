import type { Allowance } from './allowance.js';

/**
 * The `usage` object split around its two per-request numbers. Built once per account and
 * period, so a request only concatenates: no JSON work on the hot path.
 */
export interface UsageFragments {
  head: string;
  mid: string;
  tail: string;
}

export function usageFragments(a: Allowance): UsageFragments {
  return {
    head: `{"plan_type":${JSON.stringify(a.plan)},"requests_used":`,
    mid: `,"request_limit":${a.limit},"requests_remaining":`,
    tail:
      `,"request_period":${JSON.stringify(a.period.kind)}` +
      `,"period_started_at":${JSON.stringify(a.period.startedAt)}` +
      `,"period_ends_at":${JSON.stringify(a.period.endsAt)}}`,
  };
}

export function usageJson(f: UsageFragments, used: number, limit: number): string {
  return f.head + used + f.mid + Math.max(0, limit - used) + f.tail;
}
