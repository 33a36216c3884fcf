import { OPENED } from '../counting/lua.js';

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
 * no account. Its usage history stays: when it has period records (its index of periods lives
 * until the last of them expires), the account's fields are kept under its `deleted` key until
 * then, for the exports to name it (label, plan); its counters and records expire on their own.
 *
 * KEYS[1] account hash, KEYS[2] its index of periods, KEYS[3] its `deleted` key. ARGV[1]
 * channel, ARGV[2] account id.
 * Returns false (null) when there is no such account, else {1 when kept (0 when not), its
 * HGETALL before removal}.
 */
export const DELETE_ACCOUNT = `${KEY_HASHES}
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return false end
local hashes = key_hashes(KEYS[1])
-- The index's absolute expiry (Redis 7.0), not PTTL then PEXPIRE: a millisecond that turns
-- between those two would keep the fields past the records they name.
local keep = redis.call('PEXPIRETIME', KEYS[2])
if keep > 0 then
  redis.call('RENAME', KEYS[1], KEYS[3])
  redis.call('PEXPIREAT', KEYS[3], keep)
else
  redis.call('DEL', KEYS[1])
end
redis.call('PUBLISH', ARGV[1], cjson.encode({type = 'account', id = ARGV[2], keyHashes = hashes}))
return {keep > 0 and 1 or 0, fields}
`;

/**
 * Adds a grant: appends it to the account's `grants` (a JSON array; grants of periods that
 * started before ARGV[5] are dropped), bumps the revision and announces the account, and adds
 * its requests to the period's record, opening the record as the period's first request would
 * (counting/lua.ts OPENED) when it has none. One step: a consume sees the grant and the new
 * revision together, and the record's grants always match the account's.
 *
 * KEYS[1] account hash, KEYS[2] the period's days hash. ARGV[1] channel, ARGV[2] account id,
 * ARGV[3] the grant (JSON), ARGV[4] its requests, ARGV[5] unix ms (see above), ARGV[6] the
 * period's limit before grants, ARGV[7] the record's expiry (unix ms), ARGV[8] the record
 * (recordMeta). Returns false (null) when there is no such account, else its HGETALL after.
 */
export const GRANT = `${OPENED}${KEY_HASHES}
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local kept = {}
local old = redis.call('HGET', KEYS[1], 'grants')
if old then
  for _, g in ipairs(cjson.decode(old)) do
    if tonumber(g.period_id) >= tonumber(ARGV[5]) then kept[#kept + 1] = g end
  end
end
kept[#kept + 1] = cjson.decode(ARGV[3])
redis.call('HSET', KEYS[1], 'grants', cjson.encode(kept))
redis.call('HINCRBY', KEYS[1], 'revision', 1)
if redis.call('PTTL', KEYS[2]) < 0 then opened(KEYS[1], KEYS[2], ARGV[6], ARGV[7], ARGV[8]) end
redis.call('HINCRBY', KEYS[2], 'granted', ARGV[4])
redis.call('PUBLISH', ARGV[1], cjson.encode({type = 'account', id = ARGV[2], keyHashes = key_hashes(KEYS[1])}))
return redis.call('HGETALL', KEYS[1])
`;

/**
 * Writes new accounts in bulk, as CREATE_ACCOUNT and the commands around it write each, without
 * announcing them (RedisAccounts.seedAccounts). KEYS[1] the listing's index; then per account its
 * hash and its key-hash index entries. ARGV per account: the number of its keys, the number of
 * its fields and values, its id, then the fields and values.
 * Returns the number of accounts written; stops at the first whose id or key hash is taken.
 */
export const SEED_ACCOUNTS = `
local k, a, n = 2, 1, 0
while a <= #ARGV do
  local keys, fields, id = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), ARGV[a + 2]
  if redis.call('EXISTS', KEYS[k]) == 1 then return n end
  for i = 1, keys do
    if not redis.call('SET', KEYS[k + i], id, 'NX') then return n end
  end
  redis.call('ZADD', KEYS[1], 0, id)
  redis.call('HSET', KEYS[k], unpack(ARGV, a + 3, a + 2 + fields))
  k, a, n = k + 1 + keys, a + 3 + fields, n + 1
end
return n
`;
