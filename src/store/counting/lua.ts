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
 * ARGV[4i-3] revision of the caller's copy, ARGV[4i-2] limit, ARGV[4i-1] counter expiry (unix ms),
 * ARGV[4i] thresholds not yet raised, `count:percent,…` by count ('' for none; see ALERT below);
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
 *
 * ALERT (usage.threshold): the caller sends the thresholds of the period it has not yet seen
 * reached, with their counts worked out once per account and period; a request whose count is
 * below the first costs one comparison. One that reaches a count marks its percent in the
 * period's `:alerted` hash (HSETNX: once per account, period and threshold, whatever the number
 * of gateways; a refund and a recount find the mark) and appends `percent:used:limit` to the
 * period's `:outbox` list, from which the gateway moves it to the webhook outbox. `used ≥ count`
 * rather than `=`: a limit lowered below the count mid-period still raises it. Both keys are
 * the counter's name plus a suffix: the account's hash tag, so the same Cluster slot, and not
 * sent with every request since only a crossing touches them.
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
  local k, a = 2 * i, 4 * i
  local code, used = 0, 0
  local account = redis.call('HMGET', KEYS[k - 1], 'revision', 'status')
  if account[1] ~= ARGV[a - 3] then code = 3
  elseif account[2] ~= 'active' then code = 2
  else
    used = redis.call('INCR', KEYS[k])
    if used == 1 then redis.call('PEXPIREAT', KEYS[k], ARGV[a - 1]) end
    if used > tonumber(ARGV[a - 2]) then
      code = 1
      used = redis.call('DECR', KEYS[k])
    end
    -- ALERT (see above)
    local al = ARGV[a]
    if al ~= '' and used >= tonumber(string.sub(al, 1, string.find(al, ':', 1, true) - 1)) then
      local fired, outbox = KEYS[k] .. ':alerted', KEYS[k] .. ':outbox'
      for count, pct in string.gmatch(al, '(%d+):(%d+)') do
        if used >= tonumber(count) and redis.call('HSETNX', fired, pct, used) == 1 then
          redis.call('RPUSH', outbox, pct .. ':' .. used .. ':' .. ARGV[a - 2])
          redis.call('PEXPIREAT', fired, ARGV[a - 1])
          redis.call('PEXPIREAT', outbox, ARGV[a - 1])
        end
      end
    end
    -- end ALERT
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
