/**
 * Lua run by the Redis store for the price history. Each script touches only the price hash, so
 * every script runs unchanged on Redis Cluster. Each also PUBLISHes its announcement: a change is
 * stored if and only if it is announced, even when the gateway dies between two commands. The
 * hash's field `#seq` (never a date) numbers the changes, in the same step that makes them.
 */

/**
 * Stores a price set under its effective date and announces it.
 *
 * KEYS[1] price hash. ARGV[1] effective date, ARGV[2] JSON of the set, ARGV[3] '1' to replace
 * a set of the same date, ARGV[4] channel, ARGV[5] announcement.
 * Returns the change's number, or 0 when a set of that date exists and was kept, or is the same
 * set (nothing announced).
 */
export const PUT_PRICE_SET = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old and (ARGV[3] ~= '1' or old == ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local seq = redis.call('HINCRBY', KEYS[1], '#seq', 1)
redis.call('PUBLISH', ARGV[4], ARGV[5])
return seq
`;

/**
 * Stores many price sets and announces them once, so no instance reloads halfway through and
 * serves an intermediate set as current.
 *
 * KEYS[1] price hash. ARGV[1] '1' to replace sets of the same dates, ARGV[2] channel, ARGV[3]
 * announcement, ARGV[4..] effective date, JSON of the set, ….
 * Returns {date, change number, …} for the sets stored (nothing is announced when none was).
 */
export const PUT_PRICE_SETS = `
local out = {}
for i = 4, #ARGV, 2 do
  local old = redis.call('HGET', KEYS[1], ARGV[i])
  if not old or (ARGV[1] == '1' and old ~= ARGV[i + 1]) then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    out[#out + 1] = ARGV[i]
    out[#out + 1] = redis.call('HINCRBY', KEYS[1], '#seq', 1)
  end
end
if #out > 0 then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
return out
`;

/**
 * Removes the price set of one effective date and announces it.
 *
 * KEYS[1] price hash. ARGV[1] effective date, ARGV[2] channel, ARGV[3] announcement.
 * Returns the change's number, or 0 when there was none (nothing announced).
 */
export const DELETE_PRICE_SET = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
local seq = redis.call('HINCRBY', KEYS[1], '#seq', 1)
redis.call('PUBLISH', ARGV[2], ARGV[3])
return seq
`;
