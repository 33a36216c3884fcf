/**
 * Keeps an event unless its id was received before: KEYS[1] the id's marker, KEYS[2] the inbox
 * (hash id → item), KEYS[3] its due times (sorted set); ARGV: id, item, keep (ms), due (ms).
 * Returns 1 when kept.
 */
export const RECEIVE = `
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[3]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
return 1
`;

/**
 * Takes up to ARGV[3] items due at ARGV[1] (ms) for ARGV[2] ms: KEYS[1] the inbox, KEYS[2] the
 * due times. Returns the items taken, each with its attempt counted and its new due time.
 */
export const CLAIM = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
local due = tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, id in ipairs(ids) do
  local raw = redis.call('HGET', KEYS[1], id)
  if raw then
    local item = cjson.decode(raw)
    item.attempts = item.attempts + 1
    item.due_ms = due
    raw = cjson.encode(item)
    redis.call('HSET', KEYS[1], id, raw)
    redis.call('ZADD', KEYS[2], due, id)
    out[#out + 1] = raw
  else
    redis.call('ZREM', KEYS[2], id)
  end
end
return out
`;

/** Writes KEYS[1] only while it is still ARGV[1] (empty: absent): ARGV[2] the new value. 1 when written. */
export const CAS = `
local now = redis.call('GET', KEYS[1])
if (now or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`;
