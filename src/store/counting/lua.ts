/**
 * Lua run by the Redis store for the counters. Each script touches only the keys of one account
 * (which share the hash tag `{acct:ID}`), except a batched CONSUME, which is only sent batched to
 * a standalone Redis (redis-batch.ts); so every script runs unchanged on Redis Cluster.
 */

/**
 * The record of a period, as one argument of CONSUME: `PERIOD KIND START END PLAN` (unix ms; the
 * plan last, as the only free text). Built once per spec (redis-batch.ts).
 */
export function recordMeta(periodId: string, kind: string, startMs: number, endMs: number, plan: string): string {
  return `${periodId} ${kind} ${startMs} ${endMs} ${plan}`;
}

/**
 * The period's first counted request writes its record into the days hash (the fields `plan`,
 * `kind`, `limit`, `start`, `end`; days are the fields that start with a digit), gives the hash
 * the counter's expiry, and lists the period in the account's index of periods (score: its
 * expiry; expired entries are dropped here). The index is named from the account's key, not in
 * KEYS: it shares the account's hash tag, so it is on the same Cluster slot, and naming it per
 * request would cost every request for what only the first of a period needs.
 */
export const OPENED = `
local function opened(account, days, limit, expiry, meta)
  local id, kind, first, last, plan = string.match(meta, '^(%S+) (%S+) (%d+) (%d+) (.*)$')
  redis.call('HSET', days, 'plan', plan, 'kind', kind, 'limit', limit, 'start', first, 'end', last)
  redis.call('PEXPIREAT', days, expiry)
  local index = string.sub(account, 1, -8) .. 'periods'
  redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. first)
  redis.call('ZADD', index, expiry, id)
  redis.call('PEXPIREAT', index, redis.call('ZRANGE', index, -1, -1, 'WITHSCORES')[2])
end
`;

/**
 * Counts a batch of metered requests in one call, each checked and counted independently of
 * the others, in order: a refused request leaves the count as it was, and requests of one
 * account in the same batch see each other's counts.
 *
 * For request i (1-based): KEYS[3i-2] account hash, KEYS[3i-1] counter of the period, KEYS[3i]
 * the period's days (its ledger and record); ARGV[5i-4] revision of the caller's copy, followed
 * by a space and a key id when that key's last-used day (field `lu:ID` of the account hash) is to
 * become the call's day if the request is counted (ConsumeSpec.touch), ARGV[5i-3]
 * limit, ARGV[5i-2] counter expiry (unix ms), ARGV[5i-1] the period's record (recordMeta),
 * ARGV[5i] thresholds not yet raised, `count:percent,…` by count ('' for none; see ALERT below);
 * then ARGV[#ARGV-1] the day (YYYY-MM-DD in the configured zone) of every request of the call;
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
 * The usage ledger: a counted request also counts in its day's field of the period's days hash,
 * in the same script, so the days of a period sum to its counter by construction. The first
 * request of a day finds the hash without an expiry only when the period has no record yet:
 * that request writes it (`opened`), so the record costs once per period, not per request.
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
 *
 * The limit is the caller's effective one (the plan's or the account's plus the period's grants),
 * and the record opened here takes it as the period's limit before grants: a grant opens its
 * period's record itself (accounts/lua.ts GRANT), so a record opened here is of a period without
 * grants at the revision checked.
 */
export const CONSUME = `${OPENED}
local deadline = tonumber(ARGV[#ARGV])
if deadline > 0 then
  local now = redis.call('TIME')
  if now[1] * 1000 + math.floor(now[2] / 1000) > deadline then
    return redis.error_reply('EXPIRED the caller stopped waiting for this consume')
  end
end
local day = ARGV[#ARGV - 1]
local out = {}
for i = 1, #KEYS / 3 do
  local k, a = 3 * i, 5 * i
  local code, used = 0, 0
  local revision, touch = ARGV[a - 4], nil
  local space = string.find(revision, ' ', 1, true)
  if space then revision, touch = string.sub(revision, 1, space - 1), string.sub(revision, space + 1) end
  local account = redis.call('HMGET', KEYS[k - 2], 'revision', 'status')
  if account[1] ~= revision then code = 3
  elseif account[2] ~= 'active' then code = 2
  else
    used = redis.call('INCR', KEYS[k - 1])
    if used == 1 then redis.call('PEXPIREAT', KEYS[k - 1], ARGV[a - 2]) end
    if used > tonumber(ARGV[a - 3]) then
      code = 1
      used = redis.call('DECR', KEYS[k - 1])
    elseif redis.call('HINCRBY', KEYS[k], day, 1) == 1 and redis.call('PTTL', KEYS[k]) < 0 then
      opened(KEYS[k - 2], KEYS[k], ARGV[a - 3], ARGV[a - 2], ARGV[a - 1])
    end
    if touch and code == 0 then redis.call('HSET', KEYS[k - 2], 'lu:' .. touch, day) end
    -- ALERT (see above)
    local al = ARGV[a]
    if al ~= '' and used >= tonumber(string.sub(al, 1, string.find(al, ':', 1, true) - 1)) then
      local fired, outbox = KEYS[k - 1] .. ':alerted', KEYS[k - 1] .. ':outbox'
      for count, pct in string.gmatch(al, '(%d+):(%d+)') do
        if used >= tonumber(count) and redis.call('HSETNX', fired, pct, used) == 1 then
          redis.call('RPUSH', outbox, pct .. ':' .. used .. ':' .. ARGV[a - 3])
          redis.call('PEXPIREAT', fired, ARGV[a - 2])
          redis.call('PEXPIREAT', outbox, ARGV[a - 2])
        end
      end
    end
    -- end ALERT
  end
  out[2 * i - 1] = code
  out[2 * i] = used
end
return out
`;

/**
 * Takes back one counted request (its pass-through answer failed) from the counter and from the
 * day it was counted on; never below zero. Both keep their expiry.
 *
 * KEYS[1] counter of the period, KEYS[2] its days. ARGV[1] the day. Returns the count after.
 */
export const REFUND = `
local used = tonumber(redis.call('GET', KEYS[1]) or 0)
if used <= 0 then return 0 end
if tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or 0) > 0 then redis.call('HINCRBY', KEYS[2], ARGV[1], -1) end
return redis.call('DECR', KEYS[1])
`;

/**
 * The periods of one account that overlap [ARGV[1], ARGV[2]) (unix ms), with their counts.
 *
 * KEYS[1] the account's index of periods; the days and counter keys are named from it (same
 * hash tag, so same slot). Returns {period id, count, HGETALL of its days hash, ...} flattened as
 * {id1, used1, n1, field, value, ..., id2, ...} where n is the number of fields and values.
 */
export const PERIODS = `
local base = string.sub(KEYS[1], 1, -8)
local from, to = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local days = base .. 'days:' .. id
  local span = redis.call('HMGET', days, 'start', 'end')
  if span[1] and tonumber(span[1]) < to and tonumber(span[2]) > from then
    local fields = redis.call('HGETALL', days)
    out[#out + 1] = id
    out[#out + 1] = tonumber(redis.call('GET', base .. 'used:' .. id) or 0)
    out[#out + 1] = #fields
    for _, f in ipairs(fields) do out[#out + 1] = f end
  end
end
return out
`;

/**
 * Notes a change of plan or limit on a period's record: the plan and limit it had until then,
 * with the count at that moment, go to its `changes` (lines of `AT LIMIT USED PLAN`), and the
 * record takes the new ones and the end given: earlier when the change started another period,
 * later when an earlier period of the same id goes on under the new plan (operations.ts).
 * Nothing when the period has no record (no request counted in it).
 *
 * KEYS[1] the period's days hash, KEYS[2] its counter. ARGV: at (unix ms), plan, limit, end.
 */
export const RECORD_CHANGE = `
if redis.call('PTTL', KEYS[1]) < 0 then return 0 end
local old = redis.call('HMGET', KEYS[1], 'plan', 'limit', 'end', 'changes')
local used = redis.call('GET', KEYS[2]) or '0'
local changes = (old[4] or '') .. ARGV[1] .. ' ' .. old[2] .. ' ' .. used .. ' ' .. old[1] .. '\\n'
redis.call('HSET', KEYS[1], 'plan', ARGV[2], 'limit', ARGV[3], 'changes', changes)
redis.call('HSET', KEYS[1], 'end', ARGV[4])
return 1
`;
