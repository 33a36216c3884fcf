/**
 * Lua run by the Redis store for the keys. They live in the account's hash (field `keys`,
 * `lu:ID` for the day key ID last worked and `rt:ID` for the key a rotation replaced it with),
 * so each script touches one account's hash and runs unchanged on Redis Cluster; the key-hash
 * index entries are written by their own commands.
 */

/**
 * Writes an account's keys when the account is still at the revision they were worked out
 * from, bumps the revision and announces, in one step: a consume from a copy older than the
 * change answers `changed`.
 *
 * KEYS[1] account hash. ARGV[1] channel, ARGV[2] revision read, ARGV[3] keys (JSON),
 * ARGV[4] announcement, ARGV[5] `key_hash`, the one field the previous release reads
 * (edit.ts previousReleaseHash), ARGV[6] successors to note (JSON object, key id → the id of
 * the key that replaced it), ARGV[7..] ids of removed keys (their `lu:` and `rt:` fields go too).
 * Returns false (null) when the account is gone or at another revision, else its HGETALL after.
 */
export const SET_KEYS = `
if redis.call('HGET', KEYS[1], 'revision') ~= ARGV[2] then return false end
redis.call('HSET', KEYS[1], 'keys', ARGV[3], 'key_hash', ARGV[5])
for id, successor in pairs(cjson.decode(ARGV[6])) do redis.call('HSET', KEYS[1], 'rt:' .. id, successor) end
for i = 7, #ARGV do redis.call('HDEL', KEYS[1], 'lu:' .. ARGV[i], 'rt:' .. ARGV[i]) end
redis.call('HINCRBY', KEYS[1], 'revision', 1)
redis.call('PUBLISH', ARGV[1], ARGV[4])
return redis.call('HGETALL', KEYS[1])
`;

/**
 * Notes the day a key last worked, unless the account is gone or it already says that day or
 * later. No revision bump, no announcement: no copy of the key is stale for it.
 *
 * KEYS[1] account hash. ARGV[1] key id, ARGV[2] day (YYYY-MM-DD).
 */
export const MARK_USED = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local field = 'lu:' .. ARGV[1]
local was = redis.call('HGET', KEYS[1], field)
if was and was >= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], field, ARGV[2])
return 1
`;
