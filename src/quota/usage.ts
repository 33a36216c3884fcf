import type { Allowance } from './allowance.js';

/** The `usage` object of every answer, in the API's key order: the one definition of it. */
export interface Usage {
  plan_type: string;
  requests_used: number;
  request_limit: number;
  requests_remaining: number;
  request_period: string;
  period_started_at: string;
  period_ends_at: string;
}

export function usageObject(a: Allowance, used: number): Usage {
  return {
    plan_type: a.plan,
    requests_used: used,
    request_limit: a.limit,
    requests_remaining: Math.max(0, a.limit - used),
    request_period: a.period.kind,
    period_started_at: a.period.startedAt,
    period_ends_at: a.period.endsAt,
  };
}

/**
 * `usageObject` serialised once per account and period and split around its two per-request
 * numbers (requests_used, requests_remaining), so a request only concatenates.
 */
export interface UsageFragments {
  head: string;
  mid: string;
  tail: string;
}

/** Where the value of `key` starts and ends in `json` (values here contain no comma). */
function valueAt(json: string, key: string): [number, number] {
  const start = json.indexOf(`"${key}":`) + key.length + 3;
  return [start, json.indexOf(',', start)];
}

export function usageFragments(a: Allowance): UsageFragments {
  const json = JSON.stringify(usageObject(a, 0));
  const [usedStart, usedEnd] = valueAt(json, 'requests_used');
  const [remainingStart, remainingEnd] = valueAt(json, 'requests_remaining');
  return { head: json.slice(0, usedStart), mid: json.slice(usedEnd, remainingStart), tail: json.slice(remainingEnd) };
}

export function usageJson(f: UsageFragments, used: number, limit: number): string {
  return f.head + used + f.mid + Math.max(0, limit - used) + f.tail;
}

/**
 * The IETF draft's `RateLimit-Policy` value for the allowance (draft-ietf-httpapi-ratelimit-headers-11):
 * a policy named "period", its quota and window in seconds, then with a burst limit one named
 * "burst". Fixed per account and period, so built once with the cached account.
 */
export function ratePolicy(a: Allowance): string {
  const period = `"period";q=${a.limit};w=${Math.round((a.period.endMs - a.period.startMs) / 1000)}`;
  return a.burst === null ? period : `${period}, "burst";q=${a.burst.limit};w=${a.burst.window_s}`;
}
