/**
 * Lua run by the Redis store for coordination: the invalid-key throttle and leases. Each script
 * touches one key (an address's attempts, a lease), so every script runs unchanged on Redis
 * Cluster. A block is announced by the script that decides it, so it is announced exactly once.
 */

/**
 * The invalid-key attempts of one address across every instance (coordination/interface.ts
 * `invalidKeyAttempts`): the hash holds `f` invalid keys and `r` reservations within the window,
 * `t` when `r` last grew (Redis' clock, ms: reservations older than ARGV[10] are forgotten, their
 * instance gone), or, while the address is blocked, `b` alone, expiring with the block. The
 * change whose invalid keys reach the limit replaces the count with the block and announces it.
 *
 * KEYS[1] attempts of the address. ARGV[1] window (ms), ARGV[2] most attempts, ARGV[3] block
 * (ms), ARGV[4] channel, ARGV[5] announcement, ARGV[6] wanted, ARGV[7] released, ARGV[8] failed
 * (reserved), ARGV[9] invalid unreserved, ARGV[10] life of a reservation (ms).
 * Returns {granted, room (1 or 0), ms blocked}.
 */
export const INVALID_KEY = `
local v = redis.call('HMGET', KEYS[1], 'f', 'r', 't', 'b')
if v[4] then return {0, 0, redis.call('PTTL', KEYS[1])} end
local max = tonumber(ARGV[2])
local want = tonumber(ARGV[6])
local f = (tonumber(v[1]) or 0) + tonumber(ARGV[8]) + tonumber(ARGV[9])
local r = tonumber(v[2]) or 0
local now = nil
if r > 0 or want > 0 then
  local clock = redis.call('TIME')
  now = clock[1] * 1000 + math.floor(clock[2] / 1000)
end
if r > 0 and now - tonumber(v[3]) > tonumber(ARGV[10]) then r = 0 end
r = math.max(0, r - tonumber(ARGV[7]) - tonumber(ARGV[8]))
if f >= max then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'b', 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('PUBLISH', ARGV[4], ARGV[5])
  return {0, 0, tonumber(ARGV[3])}
end
local granted = math.min(want, math.max(0, max - f - r))
local grew = v[3] or 0
if granted > 0 then grew = now end
redis.call('HSET', KEYS[1], 'f', f, 'r', r + granted, 't', grew)
if not v[1] then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
if f + r + granted < max then return {granted, 1, 0} end
return {granted, 0, 0}
`;

/**
 * Takes a lease that nobody holds, or renews it for its holder.
 *
 * KEYS[1] lease key. ARGV[1] holder, ARGV[2] time to live (ms).
 * Returns 1 when ARGV[1] holds the lease afterwards, else 0.
 */
export const LEASE = `
local holder = redis.call('GET', KEYS[1])
if holder == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if holder ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** Deletes the lease KEYS[1] only when ARGV[1] holds it. Returns 1 when deleted. */
export const RELEASE_LEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
`;
