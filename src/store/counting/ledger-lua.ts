/**
 * The usage ledger on Redis as day marks (issue 43): the period's days hash holds, per day, the
 * count at which that day's requests start, and a day's count is the distance to the next mark
 * (or to the counter). A counted request then costs its counter's INCR alone; the ledger is
 * written once per account, period and day, not once per request. Read by period-records.ts.
 *
 * Days hash fields (besides the record's, `plan` `kind` `limit` `start` `end` `changes` `granted`):
 *   `@YYYY-MM-DD`  a mark: `V S`, V the ledger's count and S the sum of the old-layout fields,
 *                  both as they stood before the day's first counted request
 *   `YYYY-MM-DD`   the old layout (a count per day, HINCRBY per request): periods written by
 *                  an earlier release, or by one still running beside this one, read as they are
 *   `DAYLESS`      refunds that found nothing counted on their day: taken from the counter alone
 * The ledger's count is the counter plus DAYLESS. A marked day's count is, to the next mark or
 * to (counter + DAYLESS, the old fields' sum now), ΔV − ΔS, plus its old-layout field if any.
 * S keeps a gateway of the earlier release exact beside this one (a rolling upgrade): its
 * request counts in its old field and in the counter, so the mark's interval subtracts what the
 * old fields grew by in it. DAYLESS keeps a refund with nothing on its day from taking a
 * request off another day (the contract: the counter goes down, no day does).
 *
 * Which requests mark, in the script rather than by a note of the gateway: the account hash
 * (read anyway, by CONSUME's HMGET) names the last day marked and its period (HINT_DAY,
 * HINT_DAYS). A counted request of that day and period adds nothing; any other (a new day, a
 * new period, a gateway whose clock is behind, a hint lost) runs `mark`: it reads the days hash,
 * sets its day's mark unless there is one, and moves every later mark up by one, so the request
 * counts on its own day whatever order Redis runs gateways' calls in. Only a request that is
 * counted marks: a refused one leaves no trace, and the next counted one of its day marks.
 * The hint is true when set (the script that set the mark sets it) and stays true: only `mark`
 * adds marks, and it moves the hint to any mark it adds after the hinted one (a refund moves
 * marks, never adds or removes one). A counter just made (count 1) marks too: its days may have
 * expired while the hint still named them. A gateway note
 * ("first of its day", once per gateway) could not be exact: a request of 23:59:59.999 from one
 * gateway that Redis runs after another gateway's first of 00:00 would count on the new day.
 */

/** The account hash's fields naming the last marked day and the days hash it is marked in. */
export const HINT_DAY = 'ledger_day';
export const HINT_DAYS = 'ledger_days';
/** The days hash's count of refunds that found nothing on their day (see above). */
export const DAYLESS = 'dayless_refunds';

/**
 * Lua shared by MARK and REFUND: `read(days, day)` reads the days hash once and returns its mark
 * for `day` (or nil), the later marks (field, value, …), the next mark's value (or nil), the sum
 * of the old-layout fields, `day`'s old field, DAYLESS, and whether the period has a record;
 * `shift(days, later, by)` moves the later marks by `by`.
 */
const DAYS = `
local function read(days, day)
  local fields = redis.call('HGETALL', days)
  local own, nextDay, nextMark, later, old, oldDay, dayless, recorded = nil, nil, nil, {}, 0, 0, 0, false
  for j = 1, #fields, 2 do
    local f, v = fields[j], fields[j + 1]
    local c = string.byte(f)
    if c == 64 then
      local d = string.sub(f, 2)
      if d == day then own = v
      elseif d > day then
        later[#later + 1] = f
        later[#later + 1] = v
        if not nextDay or d < nextDay then nextDay, nextMark = d, v end
      end
    elseif c and c >= 48 and c <= 57 then
      old = old + tonumber(v)
      if f == day then oldDay = tonumber(v) end
    elseif f == 'start' then recorded = true
    elseif f == '${DAYLESS}' then dayless = tonumber(v) end
  end
  return own, later, nextMark, old, oldDay, dayless, recorded
end
local function shift(days, later, by, writes)
  for j = 1, #later, 2 do
    local v, s = string.match(later[j + 1], '^(%d+) (%d+)$')
    writes[#writes + 1] = later[j]
    writes[#writes + 1] = (tonumber(v) + by) .. ' ' .. s
  end
  if #writes > 0 then redis.call('HSET', days, unpack(writes)) end
end
`;

/**
 * `mark(account, days, day, used, hint)`: after a counted request (`used`: the counter after it)
 * of `day` whose day and period the hint did not name. Reads the days hash; returns whether it
 * has no record yet (the caller opens it). `hint`: the hinted day, or nil.
 */
export const MARK = `${DAYS}
local function mark(account, days, day, used, hint)
  local own, later, nextMark, old, _, dayless, recorded = read(days, day)
  local writes = {}
  if not own then
    writes[1] = '@' .. day
    writes[2] = nextMark or ((used - 1 + dayless) .. ' ' .. old)
  end
  shift(days, later, 1, writes)
  if #later == 0 and (not hint or day >= hint) then
    redis.call('HSET', account, '${HINT_DAY}', day, '${HINT_DAYS}', days)
  end
  return not recorded
end
`;

/**
 * Takes back one counted request (its pass-through answer failed) from the counter and from the
 * day it was counted on; never below zero. Both keep their expiry. The day gives back from its
 * marked count (every later mark moves down by one) or else from its old-layout field; with
 * nothing on it, the counter alone goes down (DAYLESS).
 *
 * KEYS[1] counter of the period, KEYS[2] its days. ARGV[1] the day. Returns the count after.
 */
export const REFUND = `${DAYS}
local used = tonumber(redis.call('GET', KEYS[1]) or 0)
if used <= 0 then return 0 end
local day = ARGV[1]
local own, later, nextMark, old, oldDay, dayless = read(KEYS[2], day)
local marked = 0
if own then
  local v, s = string.match(own, '^(%d+) (%d+)$')
  local nv, ns = used + dayless, old
  if nextMark then nv, ns = string.match(nextMark, '^(%d+) (%d+)$') end
  marked = (tonumber(nv) - tonumber(v)) - (tonumber(ns) - tonumber(s))
end
if marked > 0 then shift(KEYS[2], later, -1, {})
elseif oldDay > 0 then redis.call('HINCRBY', KEYS[2], day, -1)
else redis.call('HINCRBY', KEYS[2], '${DAYLESS}', 1) end
return redis.call('DECR', KEYS[1])
`;
