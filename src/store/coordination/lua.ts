/**
 * Lua run by the Redis store for coordination: the invalid-key throttle and leases. Each script
 * touches one key (an address's attempts, a lease), so every script runs unchanged on Redis
 * Cluster. A block is announced by the script that decides it, so it is announced exactly once.
 */

/**
 * Counts invalid keys from one address across every instance (a batch of them: each instance
 * shares its attempts a few times a second); the batch that reaches the limit within the window
 * resets the count and announces the block.
 *
 * KEYS[1] attempts of the address. ARGV[1] window (ms), ARGV[2] most attempts, ARGV[3] channel,
 * ARGV[4] announcement, ARGV[5] attempts in this batch.
 * Returns 1 when this batch blocked the address, else 0.
 */
export const INVALID_KEY = `
local added = tonumber(ARGV[5])
local n = redis.call('INCRBY', KEYS[1], added)
if n == added then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
if n < tonumber(ARGV[2]) then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
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
