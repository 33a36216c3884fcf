/**
 * Lua run by the Redis store for the price history. Each script touches only the price hash, so
 * every script runs unchanged on Redis Cluster. Each also PUBLISHes its announcement: a change is
 * stored if and only if it is announced, even when the gateway dies between two commands.
 */

/**
 * Stores a price set under its effective date and announces it.
 *
 * KEYS[1] price hash. ARGV[1] effective date, ARGV[2] JSON of the set, ARGV[3] '1' to replace
 * a set of the same date, ARGV[4] channel, ARGV[5] announcement.
 * Returns 1 when stored, 0 when a set of that date exists and was kept (nothing announced).
 */
export const PUT_PRICE_SET = `
if ARGV[3] ~= '1' and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
`;

/**
 * Stores many price sets and announces them once, so no instance reloads halfway through and
 * serves an intermediate set as current.
 *
 * KEYS[1] price hash. ARGV[1] '1' to replace sets of the same dates, ARGV[2] channel, ARGV[3]
 * announcement, ARGV[4..] effective date, JSON of the set, ….
 * Returns how many were stored (nothing is announced when none was).
 */
export const PUT_PRICE_SETS = `
local stored = 0
for i = 4, #ARGV, 2 do
  if ARGV[1] == '1' or redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    stored = stored + 1
  end
end
if stored > 0 then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
return stored
`;

/**
 * Removes the price set of one effective date and announces it.
 *
 * KEYS[1] price hash. ARGV[1] effective date, ARGV[2] channel, ARGV[3] announcement.
 * Returns 1 when removed, 0 when there was none (nothing announced).
 */
export const DELETE_PRICE_SET = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
`;
