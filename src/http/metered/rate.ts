/**
 * The rate headers of an answer for an account: the X-RateLimit-* trio and the IETF draft's
 * `RateLimit-Policy` / `RateLimit` fields (draft-ietf-httpapi-ratelimit-headers-11, Structured
 * Fields Lists: "period", then "burst" for an account with a burst limit). The policy is built
 * once per account and period (AccountEntry.ratePolicy); a request only writes its numbers into
 * `RateLimit`. The burst item is there when the store said where the window stands (a counted
 * request, not a HEAD or a usage check).
 */
import type { AccountEntry } from '../../quota/meter.js';
import type { BurstState } from '../../store/store.js';
import type { RateFields } from '../response-headers.js';

export function rateFields(entry: AccountEntry, used: number, nowMs: number, burst?: BurstState): RateFields {
  const { limit, period } = entry.allowance;
  const remaining = Math.max(0, limit - used);
  const left = Math.max(0, Math.ceil((period.endMs - nowMs) / 1000));
  return {
    limit,
    remaining,
    reset: Math.ceil(period.endMs / 1000),
    policy: entry.ratePolicy,
    rate:
      burst === undefined
        ? `"period";r=${remaining};t=${left}`
        : `"period";r=${remaining};t=${left}, "burst";r=${burst.remaining};t=${Math.ceil(burst.resetMs / 1000)}`,
  };
}

/**
 * The rate headers as a header list, for an answer written elsewhere (the pass-through's): named
 * in lower case, as the origin's headers it goes out with are, so a cache hit adds them as they are.
 */
export const rateHeaders = (r: RateFields): Array<string | number> => [
  'x-ratelimit-limit',
  r.limit,
  'x-ratelimit-remaining',
  r.remaining,
  'x-ratelimit-reset',
  r.reset,
  'ratelimit-policy',
  r.policy,
  'ratelimit',
  r.rate,
];
