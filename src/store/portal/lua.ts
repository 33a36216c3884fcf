/**
 * Lua run by the Redis store for the portal. Each script touches one key (an account's members,
 * a session, a link, an address's link count), so each runs unchanged on Redis Cluster; the
 * person's index and sign-out generation are written by commands of their own.
 */

/**
 * Removes a member unless it is the account's last owner.
 * KEYS[1] the account's members (hash email → JSON). ARGV[1] email.
 * Returns 1 removed, 0 absent, -1 last owner.
 */
export const REMOVE_MEMBER = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
if cjson.decode(raw).role == 'owner' then
  local owners = 0
  for _, v in ipairs(redis.call('HVALS', KEYS[1])) do
    if cjson.decode(v).role == 'owner' then owners = owners + 1 end
  end
  if owners <= 1 then return -1 end
end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
`;

/**
 * Writes when a member last signed in. KEYS[1] the account's members. ARGV[1] email, ARGV[2] ISO time.
 * A member removed meanwhile stays removed.
 */
export const MARK_SIGN_IN = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local m = cjson.decode(raw)
m.last_sign_in_at = ARGV[2]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(m))
return 1
`;

/**
 * Counts one link in the window. KEYS[1] the address's count. ARGV[1] most, ARGV[2] window (ms).
 * Returns 1 when counted, 0 when the window is full.
 */
export const COUNT_LINK = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[1])
if n == 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`;

/** Returns the value of KEYS[1] and deletes it: a link works once (GETDEL, on Redis before 6.2 too). */
export const TAKE = `
local v = redis.call('GET', KEYS[1])
if v then redis.call('DEL', KEYS[1]) end
return v
`;

/** Returns the field ARGV[1] of the hash KEYS[1] and deletes it: a sign-up is approved or rejected once. */
export const TAKE_FIELD = `
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v then redis.call('HDEL', KEYS[1], ARGV[1]) end
return v
`;

/**
 * Starts a session. KEYS[1] the session. ARGV[1] the session's JSON without its start, ARGV[2]
 * idle (ms). Returns the start (Redis' clock, ms), which the JSON then holds.
 */
export const START_SESSION = `
local clock = redis.call('TIME')
local now = clock[1] * 1000 + math.floor(clock[2] / 1000)
local s = cjson.decode(ARGV[1])
s.started_ms = now
redis.call('SET', KEYS[1], cjson.encode(s), 'PX', ARGV[2])
return now
`;

/**
 * Uses a session: its idle time starts again, never past its absolute end.
 * KEYS[1] the session. ARGV[1] idle (ms), ARGV[2] absolute life (ms), ARGV[3] an account to
 * switch to (empty: none). Returns its JSON, or nil when it ended.
 */
export const USE_SESSION = `
local raw = redis.call('GET', KEYS[1])
if not raw then return nil end
local s = cjson.decode(raw)
local clock = redis.call('TIME')
local now = clock[1] * 1000 + math.floor(clock[2] / 1000)
local left = s.started_ms + tonumber(ARGV[2]) - now
if left <= 0 then
  redis.call('DEL', KEYS[1])
  return nil
end
if ARGV[3] ~= '' then
  s.account_id = ARGV[3]
  raw = cjson.encode(s)
  redis.call('SET', KEYS[1], raw, 'PX', math.min(tonumber(ARGV[1]), left))
else
  redis.call('PEXPIRE', KEYS[1], math.min(tonumber(ARGV[1]), left))
end
return raw
`;

/**
 * Ends every session of a person begun until now. KEYS[1] the person's end mark. ARGV[1] how
 * long a session lives at most (ms): after that the mark has nothing left to end.
 */
export const END_SESSIONS = `
local clock = redis.call('TIME')
local now = clock[1] * 1000 + math.floor(clock[2] / 1000)
redis.call('SET', KEYS[1], now, 'PX', ARGV[1])
return now
`;
