/**
 * Lua run by the Redis store to read a period's records and note a change of plan on one: off
 * the request path (exports, plan changes), each touching the keys of one account (lua.ts).
 */

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
