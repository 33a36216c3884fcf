/**
 * Lua run by the Redis store for the accounts. Each script touches only the keys of one account
 * (which share the hash tag `{acct:ID}`), so every script runs unchanged on Redis Cluster. Each
 * also PUBLISHes its announcement: a change is stored if and only if it is announced, even when
 * the gateway dies between two commands.
 */

/**
 * The key hashes of the account hash KEYS[1]: from its `keys` (JSON), or the single `key_hash`
 * of an account written before accounts had several keys.
 */
export const KEY_HASHES = `
local function key_hashes(account)
  local out = {}
  local json = redis.call('HGET', account, 'keys')
  if json then
    for _, k in ipairs(cjson.decode(json)) do out[#out + 1] = k.key_hash end
  else
    local h = redis.call('HGET', account, 'key_hash')
    if h then out[1] = h end
  end
  return out
end
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
 * announces the account with its key hashes.
 *
 * KEYS[1] account hash. ARGV[1] channel, ARGV[2] account id, ARGV[3] JSON object of
 * field → string, or null to remove the field.
 * Returns false (null) when there is no such account, else its HGETALL after.
 */
export const UPDATE_ACCOUNT = `${KEY_HASHES}
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
for field, value in pairs(cjson.decode(ARGV[3])) do
  if value == cjson.null then redis.call('HDEL', KEYS[1], field) else redis.call('HSET', KEYS[1], field, value) end
end
redis.call('HINCRBY', KEYS[1], 'revision', 1)
redis.call('PUBLISH', ARGV[1], cjson.encode({type = 'account', id = ARGV[2], keyHashes = key_hashes(KEYS[1])}))
return redis.call('HGETALL', KEYS[1])
`;

/**
 * Removes an account and announces its key hashes, so every instance forgets its cached copy. A
 * consume made from such a copy finds no revision and answers "changed"; the reload then finds
 * no account. Its counters are left to expire (they are not named in KEYS, so on Cluster this
 * script may not touch them; nothing reads them once the account is gone).
 *
 * KEYS[1] account hash. ARGV[1] channel, ARGV[2] account id.
 * Returns false (null) when there is no such account, else its HGETALL before removal.
 */
export const DELETE_ACCOUNT = `${KEY_HASHES}
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return false end
local hashes = key_hashes(KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[1], cjson.encode({type = 'account', id = ARGV[2], keyHashes = hashes}))
return fields
`;
