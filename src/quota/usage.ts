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
 * numbers (requests_used, requests_remaining), so a request only concatenates. A cached entry
 * holds them as its own fields (quota/account-entry.ts): no object of their own per account.
 */
export interface UsageFragments {
  usageHead: string;
  usageMid: string;
  usageTail: string;
}

/** Where the value of `key` starts and ends in `json` (values here contain no comma). */
function valueAt(json: string, key: string): [number, number] {
  const start = json.indexOf(`"${key}":`) + key.length + 3;
  return [start, json.indexOf(',', start)];
}

// Strings many cached accounts have alike (a plan's head, a limit's middle, a policy): held once,
// for up to this many distinct ones. A cached account is held up to `max_entries` times over.
const SHARED_MAX = 10_000;
const shared = new Map<string, string>();

/** `s` as the one copy every entry with the same text holds. */
function once(s: string): string {
  const known = shared.get(s);
  if (known !== undefined) return known;
  const own = ownCopy(s);
  if (shared.size < SHARED_MAX) shared.set(own, own);
  return own;
}

/**
 * A slice as a string of its own: V8 keeps the whole string a slice was cut from alive as long
 * as the slice. JSON.stringify's output is well-formed, so UTF-8 carries it exactly, and an
 * ASCII one comes back one byte per character.
 */
const ownCopy = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');

export function usageFragments(a: Allowance): UsageFragments {
  const json = JSON.stringify(usageObject(a, 0));
  const [usedStart, usedEnd] = valueAt(json, 'requests_used');
  const [remainingStart, remainingEnd] = valueAt(json, 'requests_remaining');
  // The head names the plan and the middle the limit: shared. The tail names the period: the account's own.
  return {
    usageHead: once(json.slice(0, usedStart)),
    usageMid: once(json.slice(usedEnd, remainingStart)),
    usageTail: ownCopy(json.slice(remainingEnd)),
  };
}

export function usageJson(f: UsageFragments, used: number, limit: number): string {
  return f.usageHead + used + f.usageMid + Math.max(0, limit - used) + f.usageTail;
}

/**
 * The IETF draft's `RateLimit-Policy` value for the allowance (draft-ietf-httpapi-ratelimit-headers-11):
 * a policy named "period", its quota and window in seconds, then with a burst limit one named
 * "burst". Fixed per account and period, so built once with the cached account.
 */
export function ratePolicy(a: Allowance): string {
  const period = `"period";q=${a.limit};w=${Math.round((a.period.endMs - a.period.startMs) / 1000)}`;
  return once(a.burst === null ? period : `${period}, "burst";q=${a.burst.limit};w=${a.burst.window_s}`);
}
