/**
 * Lua run by the Redis store. Each script touches only the keys of one account (which share the
 * hash tag `{acct:ID}`) or only the price hash, so every script runs unchanged on Redis Cluster.
 * Scripts that change something also PUBLISH its announcement: a change is stored if and only if
 * it is announced, even when the gateway dies between two commands.
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

/**
 * Counts an invalid key from one address across every instance; the attempt that reaches the
 * limit within the window resets the count and announces the block.
 *
 * KEYS[1] attempts of the address. ARGV[1] window (ms), ARGV[2] most attempts, ARGV[3] channel,
 * ARGV[4] announcement.
 * Returns 1 when this attempt blocked the address, else 0.
 */
export const INVALID_KEY = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
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

/**
 * Creates an account unless one with that id exists, and announces it.
 *
 * KEYS[1] account hash. ARGV[1] channel, ARGV[2] announcement, ARGV[3..] field, value, … (a
 * field left out is null).
 * Returns 1 when created, 0 when the id was taken (nothing written or announced).
 */
export const CREATE_ACCOUNT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1
`;

/**
 * Applies a patch and bumps the revision in one step, so no consume sees half a change, then
 * announces the account with its previous and current key hashes.
 *
 * KEYS[1] account hash. ARGV[1] channel, ARGV[2] account id, ARGV[3] JSON object of
 * field → string, or null to remove the field.
 * Returns false (null) when there is no such account, else {previous key_hash, HGETALL after}.
 */
export const UPDATE_ACCOUNT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local previous = redis.call('HGET', KEYS[1], 'key_hash')
for field, value in pairs(cjson.decode(ARGV[3])) do
  if value == cjson.null then redis.call('HDEL', KEYS[1], field) else redis.call('HSET', KEYS[1], field, value) end
end
redis.call('HINCRBY', KEYS[1], 'revision', 1)
local hashes = {previous}
local current = redis.call('HGET', KEYS[1], 'key_hash')
if current ~= previous then hashes[2] = current end
redis.call('PUBLISH', ARGV[1], cjson.encode({type = 'account', id = ARGV[2], keyHashes = hashes}))
return {previous, redis.call('HGETALL', KEYS[1])}
`;

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

/**
 * Removes an account and announces its key hash, so every instance forgets its cached copy. A
 * consume made from such a copy finds no revision and answers "changed"; the reload then finds
 * no account. Its counters are left to expire (they are not named in KEYS, so on Cluster this
 * script may not touch them; nothing reads them once the account is gone).
 *
 * KEYS[1] account hash. ARGV[1] channel, ARGV[2] account id.
 * Returns false (null) when there is no such account, else its HGETALL before removal.
 */
export const DELETE_ACCOUNT = `
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return false end
local hash = redis.call('HGET', KEYS[1], 'key_hash') or ''
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[1], cjson.encode({type = 'account', id = ARGV[2], keyHashes = {hash}}))
return fields
`;
