/**
 * Lua run by the Redis store for the counters. Each script touches only the keys of one account
 * (which share the hash tag `{acct:ID}`), except a batched CONSUME, which is only sent batched to
 * a standalone Redis (redis-batch.ts); so every script runs unchanged on Redis Cluster.
 */

/**
 * Counts a batch of metered requests in one call, each checked and counted independently of
 * the others, in order: a refused request leaves the count as it was, and requests of one
 * account in the same batch see each other's counts.
 *
 * For request i (1-based): KEYS[2i-1] account hash, KEYS[2i] counter of the period;
 * ARGV[3i-2] revision of the caller's copy, ARGV[3i-1] limit, ARGV[3i] counter expiry (unix ms);
 * the last ARGV is a deadline (unix ms in Redis' clock, 0 for none): a call Redis runs after it
 * counts nothing and fails with EXPIRED, since its caller has timed out and answered 503.
 * Returns {code1, used1, code2, used2, ...}: code 0 ok (used after counting), 1 exhausted
 * (used ≥ limit), 2 inactive, 3 changed (the account is gone or at another revision); used is 0
 * for codes 2 and 3. Integers only: they cost Redis and the client the least to encode and parse.
 *
 * The expiry is set once, when the counter is created: it is fixed for a period (its end plus
 * retention), so writing it on every increment would only add work and replication traffic.
 * A request is counted first and taken back when over the limit: one call less for every
 * request within its allowance (most of them) than reading the count first, for one more for
 * each refused one. Nothing else can run between the two, so no one sees the count over the limit.
 */
export const CONSUME = `
local deadline = tonumber(ARGV[#ARGV])
if deadline > 0 then
  local now = redis.call('TIME')
  if now[1] * 1000 + math.floor(now[2] / 1000) > deadline then
    return redis.error_reply('EXPIRED the caller stopped waiting for this consume')
  end
end
local out = {}
for i = 1, #KEYS / 2 do
  local k, a = 2 * i, 3 * i
  local code, used = 0, 0
  local account = redis.call('HMGET', KEYS[k - 1], 'revision', 'status')
  if account[1] ~= ARGV[a - 2] then code = 3
  elseif account[2] ~= 'active' then code = 2
  else
    used = redis.call('INCR', KEYS[k])
    if used == 1 then redis.call('PEXPIREAT', KEYS[k], ARGV[a]) end
    if used > tonumber(ARGV[a - 1]) then
      code = 1
      used = redis.call('DECR', KEYS[k])
    end
  end
  out[k - 1] = code
  out[k] = used
end
return out
`;

/**
 * Takes back one counted request (its pass-through answer failed); never below zero. The
 * counter keeps its expiry.
 *
 * KEYS[1] counter of the period. Returns the count after.
 */
export const REFUND = `
local used = tonumber(redis.call('GET', KEYS[1]) or 0)
if used <= 0 then return 0 end
return redis.call('DECR', KEYS[1])
`;
