/**
 * Lua run by the Redis store for webhooks. Every key of the outbox shares the hash tag `{wh}`,
 * so each script runs on one Cluster node. The keys of a delivery (`{wh}:d:ID`) and an endpoint's
 * listing (`{wh}:ep:ID`) are only known inside the scripts, which build them from the prefix in
 * ARGV: same slot as the declared keys, so this holds on a Cluster too.
 *
 * Keys: KEYS[1] endpoints hash (id → JSON), KEYS[2] due (sorted set: delivery id → next attempt
 * ms, or the end of its claim), KEYS[3] pending (delivery id → created ms).
 */

/**
 * Adds an event unless its id was seen, with one delivery per matching endpoint (match.ts says
 * the same in TypeScript).
 *
 * KEYS[4] the event id's seen-marker. ARGV[1] `{wh}` prefix, ARGV[2] event id, ARGV[3] type,
 * ARGV[4] account id or '', ARGV[5] body, ARGV[6] now (ms), ARGV[7] how long the id is remembered
 * (ms), ARGV[8] only this endpoint or '', ARGV[9] deliveries listed per endpoint.
 * Returns the number of deliveries created, or -1 when the id was seen before.
 */
export const ENQUEUE = `
if not redis.call('SET', KEYS[4], '1', 'NX', 'PX', ARGV[7]) then return -1 end
local n = 0
local endpoints = redis.call('HGETALL', KEYS[1])
for i = 1, #endpoints, 2 do
  local id = endpoints[i]
  local e = cjson.decode(endpoints[i + 1])
  local ok = false
  if ARGV[8] ~= '' then ok = id == ARGV[8]
  elseif ARGV[3] ~= 'webhook.test' then
    for _, t in ipairs(e.events) do if t == ARGV[3] then ok = true end end
    if ok and ARGV[4] ~= '' and e.account_id ~= cjson.null and e.account_id ~= ARGV[4] then ok = false end
  end
  if ok then
    local did = ARGV[2] .. '.' .. id
    redis.call('HSET', ARGV[1] .. 'd:' .. did, 'event_id', ARGV[2], 'endpoint_id', id, 'type', ARGV[3],
      'body', ARGV[5], 'attempts', 0, 'state', 'pending', 'created_ms', ARGV[6], 'next_attempt_ms', ARGV[6])
    redis.call('ZADD', KEYS[2], ARGV[6], did)
    redis.call('ZADD', KEYS[3], ARGV[6], did)
    local listing = ARGV[1] .. 'ep:' .. id
    redis.call('ZADD', listing, ARGV[6], did)
    redis.call('ZREMRANGEBYRANK', listing, 0, -1 - tonumber(ARGV[9]))
    n = n + 1
  end
end
return n
`;

/**
 * Claims the deliveries due, oldest first: each is due again only when the claim runs out, and
 * names its holder. An endpoint has at most ARGV[6] deliveries under claim (`{wh}:busy:EP`,
 * delivery id → end of its claim); a due delivery of an endpoint at that bound waits beside it
 * (`{wh}:park:EP`, by when it was due; `{wh}:parked` lists such endpoints), out of the line, so
 * a hanging receiver's backlog never stands in front of other endpoints. Parked deliveries go
 * back in line when a claim of theirs ends (RECORD) or runs out (here). A delivery whose
 * endpoint is gone is dropped.
 *
 * ARGV[1] prefix, ARGV[2] now (ms), ARGV[3] lease (ms), ARGV[4] most, ARGV[5] holder, ARGV[6]
 * claims per endpoint. Returns {delivery fields (flat), endpoint JSON, ...}.
 */
export const CLAIM = `
local prefix, now, lease, most, cap = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[6])
local parked = prefix .. 'parked'
local function free(ep)
  local busy = prefix .. 'busy:' .. ep
  redis.call('ZREMRANGEBYSCORE', busy, '-inf', now)
  return cap - redis.call('ZCARD', busy)
end
for _, ep in ipairs(redis.call('SMEMBERS', parked)) do
  local park = prefix .. 'park:' .. ep
  local n = free(ep)
  if n > 0 then
    local back = redis.call('ZPOPMIN', park, n)
    for i = 1, #back, 2 do redis.call('ZADD', KEYS[2], back[i + 1], back[i]) end
  end
  if redis.call('ZCARD', park) == 0 then redis.call('SREM', parked, ep) end
end
local out = {}
while #out < 2 * most do
  -- Every id looked at leaves the due range (dropped, parked or claimed): this ends.
  local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, most)
  if #ids == 0 then break end
  for _, id in ipairs(ids) do
    if #out >= 2 * most then break end
    local d = prefix .. 'd:' .. id
    local ep = redis.call('HGET', d, 'endpoint_id') or ''
    local endpoint = redis.call('HGET', KEYS[1], ep)
    if not endpoint then
      redis.call('ZREM', KEYS[2], id)
      redis.call('ZREM', KEYS[3], id)
      redis.call('DEL', d)
    elseif free(ep) <= 0 then
      redis.call('ZADD', prefix .. 'park:' .. ep, redis.call('ZSCORE', KEYS[2], id), id)
      redis.call('ZREM', KEYS[2], id)
      redis.call('SADD', parked, ep)
    else
      redis.call('ZADD', KEYS[2], now + lease, id)
      redis.call('ZADD', prefix .. 'busy:' .. ep, now + lease, id)
      redis.call('HSET', d, 'holder', ARGV[5])
      out[#out + 1] = redis.call('HGETALL', d)
      out[#out + 1] = endpoint
    end
  end
end
return out
`;

/**
 * Records one attempt when ARGV[3] still holds the delivery, and adds it to the delivery's log
 * (field `log`, a JSON array, the latest ARGV[10] kept).
 *
 * ARGV[1] prefix, ARGV[2] delivery id, ARGV[3] holder, ARGV[4] state after (pending, delivered,
 * failed), ARGV[5] status or '', ARGV[6] error or '', ARGV[7] next attempt (ms) or '', ARGV[8]
 * how long a finished delivery stays listed (ms), ARGV[9] the attempt (JSON), ARGV[10] attempts
 * kept.
 * Returns 1 when recorded, 0 when another holder has it (or it is gone).
 */
export const RECORD = `
local d = ARGV[1] .. 'd:' .. ARGV[2]
if redis.call('HGET', d, 'holder') ~= ARGV[3] then return 0 end
-- The endpoint's claim ends: the first of its deliveries waiting at the bound goes back in line.
local ep = redis.call('HGET', d, 'endpoint_id') or ''
redis.call('ZREM', ARGV[1] .. 'busy:' .. ep, ARGV[2])
local back = redis.call('ZPOPMIN', ARGV[1] .. 'park:' .. ep, 1)
if #back > 0 then redis.call('ZADD', KEYS[2], back[2], back[1]) end
redis.call('HINCRBY', d, 'attempts', 1)
local log = cjson.decode(redis.call('HGET', d, 'log') or '[]')
log[#log + 1] = cjson.decode(ARGV[9])
while #log > tonumber(ARGV[10]) do table.remove(log, 1) end
redis.call('HSET', d, 'holder', '', 'state', ARGV[4], 'last_status', ARGV[5], 'last_error', ARGV[6],
  'next_attempt_ms', ARGV[7], 'log', cjson.encode(log))
if ARGV[4] == 'pending' then
  redis.call('ZADD', KEYS[2], ARGV[7], ARGV[2])
else
  redis.call('ZREM', KEYS[2], ARGV[2])
  redis.call('ZREM', KEYS[3], ARGV[2])
  redis.call('PEXPIRE', d, ARGV[8])
end
return 1
`;

/**
 * Adds an account's endpoint unless the account has ARGV[4] already.
 * ARGV[1] account id, ARGV[2] endpoint id, ARGV[3] endpoint JSON, ARGV[4] most.
 * Returns 1 when added, 0 at the bound.
 */
export const ADD_ACCOUNT_ENDPOINT = `
local n = 0
for _, json in ipairs(redis.call('HVALS', KEYS[1])) do
  if cjson.decode(json).account_id == ARGV[1] then n = n + 1 end
end
if n >= tonumber(ARGV[4]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
return 1
`;

/**
 * Makes a delivery due now for one more attempt (EventStore.replayDelivery). One under claim, or
 * parked at its endpoint's bound, is left alone: it is about to be attempted, and adding it to
 * the line as well would let a second holder claim it.
 *
 * ARGV[1] prefix, ARGV[2] delivery id, ARGV[3] now (ms).
 * Returns 1 when the delivery exists, else 0.
 */
export const REPLAY = `
local d = ARGV[1] .. 'd:' .. ARGV[2]
local h = redis.call('HMGET', d, 'endpoint_id', 'holder', 'created_ms')
if not h[1] then return 0 end
if (h[2] or '') ~= '' then return 1 end
if redis.call('ZSCORE', ARGV[1] .. 'park:' .. h[1], ARGV[2]) then return 1 end
redis.call('PERSIST', d)
redis.call('HSET', d, 'state', 'pending', 'next_attempt_ms', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[3], h[3], ARGV[2])
return 1
`;

/**
 * Removes an endpoint with its deliveries (listed, or waiting at its bound) and its claims.
 * ARGV[1] prefix, ARGV[2] endpoint id.
 * Returns 1 when it existed.
 */
export const DELETE_ENDPOINT = `
if redis.call('HDEL', KEYS[1], ARGV[2]) == 0 then return 0 end
local listing = ARGV[1] .. 'ep:' .. ARGV[2]
for _, id in ipairs(redis.call('ZRANGE', listing, 0, -1)) do
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
  redis.call('DEL', ARGV[1] .. 'd:' .. id)
end
redis.call('DEL', listing)
local park = ARGV[1] .. 'park:' .. ARGV[2]
for _, id in ipairs(redis.call('ZRANGE', park, 0, -1)) do
  redis.call('ZREM', KEYS[3], id)
  redis.call('DEL', ARGV[1] .. 'd:' .. id)
end
redis.call('DEL', park, ARGV[1] .. 'busy:' .. ARGV[2])
redis.call('SREM', ARGV[1] .. 'parked', ARGV[2])
return 1
`;
