/**
 * Lua run by the Redis store for the counters. Each script touches only the keys of one account
 * (which share the hash tag `{acct:ID}`), except a batched CONSUME, which is only sent batched to
 * a standalone Redis (redis-batch.ts); so every script runs unchanged on Redis Cluster.
 */
import type { Threshold } from './interface.js';
import { HINT_DAY, HINT_DAYS, MARK } from './ledger-lua.js';

/**
 * The record of a period, as one argument of CONSUME: `PERIOD KIND START END PLAN` (unix ms; the
 * plan last, as the only free text). Built once per spec (redis-batch.ts).
 */
export function recordMeta(periodId: string, kind: string, startMs: number, endMs: number, plan: string): string {
  return `${periodId} ${kind} ${startMs} ${endMs} ${plan}`;
}

/**
 * The period's first counted request writes its record into the days hash (the fields `plan`,
 * `kind`, `limit`, `start`, `end`; the days are the other fields, ledger-lua.ts), gives the hash
 * the counter's expiry, and lists the period in the account's index of periods (score: its
 * expiry; expired entries are dropped here). The index is named from the account's key, not in
 * KEYS: it shares the account's hash tag, so it is on the same Cluster slot, and naming it per
 * request would cost every request for what only the first of a period needs.
 */
export const OPENED = `
local function opened(account, days, limit, expiry, meta)
  local id, kind, first, last, plan = string.match(meta, '^(%S+) (%S+) (%d+) (%d+) (.*)$')
  redis.call('HSET', days, 'plan', plan, 'kind', kind, 'limit', limit, 'start', first, 'end', last)
  redis.call('PEXPIREAT', days, expiry)
  local index = string.sub(account, 1, -8) .. 'periods'
  redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. first)
  redis.call('ZADD', index, expiry, id)
  redis.call('PEXPIREAT', index, redis.call('ZRANGE', index, -1, -1, 'WITHSCORES')[2])
end
`;

/**
 * CONSUME's argument layout, named once for the script text and its caller (redis-batch.ts).
 * Request i (0-based) of a call has its keys at KEYS[CONSUME_KEYS·i + KEY.x] and its arguments
 * at ARGV[CONSUME_ARGS·i + ARG.x] (1-based, as Lua counts); the call's own arguments follow the
 * last request's, at ARGV[#ARGV − CONSUME_TAIL + TAIL.x].
 *
 * Only the account hash is a key: the period's counter and days share its hash tag (so its
 * Cluster slot). Their names are arguments, built once per account and period by the caller
 * (redis-batch.ts `Noted`): built in the script, they cost every request two substrings and two
 * concatenations, about 1 µs of Redis (docs/performance.md). What only a period's first request
 * or a threshold needs (expiry, limit, the record) is one argument, parsed only then.
 */
export const KEY = { account: 1 } as const;
export const CONSUME_KEYS = 1;
export const ARG = { revision: 1, cap: 2, counter: 3, days: 4, alerts: 5, burst: 6, record: 7 } as const;
export const CONSUME_ARGS = 7;
export const TAIL = { day: 1, deadline: 2, notes: 3 } as const;
export const CONSUME_TAIL = 3;

/**
 * TAIL.notes: what a few requests of a call ask beyond counting, as `I:L:KEY` entries joined by
 * ',' (I the request's 0-based index; L 1 when its reply is to carry the account,
 * ConsumeSpec.load; KEY the id of the key whose last-used day becomes the call's day if it is
 * counted, ConsumeSpec.touch, or nothing); '' for none. Sent per request, they cost every
 * request of every call a parse of its revision; here, one look-up in a table that is empty
 * but on a key's first request of a day or a miss.
 */
export function encodeNote(index: number, load: boolean, touch: string | undefined): string {
  return `${index}:${load ? 1 : 0}:${touch ?? ''}`;
}

/** The account hash's field that holds its burst log (see BURST below). */
export const BURST_FIELD = 'admitted';
/** Characters of one entry of the burst log: Redis' TIME in µs, 16 digits until the year 2286. */
const STAMP = 16;

/**
 * The thresholds of a request as ARG.alerts carries them: `count:percent` pairs by count, e.g.
 * `80:80,100:100` for a limit of 100; '' for none. The script reads the first count alone to
 * know whether a request can cross anything.
 */
export function encodeThresholds(pending: readonly Threshold[]): string {
  let out = '';
  for (const t of pending) out += `${out === '' ? '' : ','}${t.count}:${t.percent}`;
  return out;
}

/** A burst limit as ARG.burst carries it: `LIMIT WINDOW_MS`; '' for none. */
export function encodeBurst(burst: { limit: number; windowMs: number } | undefined): string {
  return burst === undefined ? '' : `${burst.limit} ${burst.windowMs}`;
}

/**
 * Counts a batch of metered requests in one call, each checked and counted independently of
 * the others, in order: a refused request leaves the count as it was, and requests of one
 * account in the same batch see each other's counts.
 *
 * Per request (layout above): KEY.account the account hash; ARG.revision the revision of the
 * caller's copy; ARG.cap what the count may reach (the limit plus any overage);
 * ARG.counter the period's counter (`…{acct:ID}:used:PERIOD`) and ARG.days its days
 * (`…:days:PERIOD`, its ledger and record); ARG.alerts the thresholds not yet raised
 * (encodeThresholds; see ALERT below); ARG.burst the burst limit (encodeBurst; see BURST
 * below); ARG.record `EXPIRY LIMIT ` then the period's record (recordMeta): the counter's
 * expiry (unix ms) and the limit. The call's TAIL.day is the day (YYYY-MM-DD in the configured zone) of every request
 * of the call; TAIL.deadline is a deadline (unix ms in Redis' clock, 0 for none): a call Redis
 * runs after it counts nothing and fails with EXPIRED, since its caller has timed out and
 * answered 503.
 * Returns {code1, used1, [room1, wait1,] code2, used2, ...}: code 0 ok (used after counting),
 * 1 exhausted (used ≥ cap), 2 inactive, 3 changed (the account is gone or at another revision),
 * 4 over the burst limit; used is 0 for codes 2 and 3. A request with a burst limit has two
 * more: the room left in its window and the milliseconds until that room next grows (0 when
 * the window is empty, or for codes 2 and 3); the caller knows which requests have them.
 * TAIL.notes (encodeNote) names the requests that also note their key's last-used day, field
 * `lu:ID` of the account hash, if counted (ConsumeSpec.touch), and those whose reply carries the
 * account. A request noted so (ConsumeSpec.load) that reached the
 * allowance check (codes 0, 1, 4) has one more, last: the account hash (HGETALL, after this
 * request's own writes), a nested array where every other item is an integer, so the caller
 * knows it by its type. The hash is read in the step that checked its revision, so it is the
 * account the request was admitted by.
 * Integers otherwise: they cost Redis and the client the least to encode and parse.
 *
 * The expiry is set once, when the counter is created: it is fixed for a period (its end plus
 * retention), so writing it on every increment would only add work and replication traffic.
 * A request is counted first and taken back when over the limit: one call less for every
 * request within its allowance (most of them) than reading the count first, for one more for
 * each refused one. Nothing else can run between the two, so no one sees the count over the limit.
 *
 * The usage ledger (ledger-lua.ts): a counted request of the day and period the account hash's
 * hint names costs nothing more; another (a new day or period) marks its day in the period's
 * days hash, in the same script, so the days of a period sum to its counter by construction.
 * That request finds whether the period has a record yet (its `start`): if not, it writes it
 * (`opened`), so the record costs once per period, not per request.
 *
 * ALERT (usage.threshold): the caller sends the thresholds of the period it has not yet seen
 * reached, with their counts worked out once per account and period; a request whose count is
 * below the first costs one comparison. One that reaches a count marks its percent in the
 * period's `:alerted` hash (HSETNX: once per account, period and threshold, whatever the number
 * of gateways; a refund and a recount find the mark) and appends `percent:used:limit` to the
 * period's `:outbox` list, from which the gateway moves it to the webhook outbox. `used ≥ count`
 * rather than `=`: a limit lowered below the count mid-period still raises it. Both keys are
 * the counter's name plus a suffix: the account's hash tag, so the same Cluster slot, and not
 * sent with every request since only a crossing touches them.
 *
 * READ: requests of one account in one call share its HMGET, since nothing else runs between
 * them: revision and status change only in other scripts, and a hint read stays true within the
 * call (its requests share their day, so no later mark comes). `mark` drops the copy so that the
 * next request sees the hint it wrote instead of marking again; a request with a burst limit
 * reads its own, since its log changes with each admission. Worth it when a call holds an account
 * more than once (a few busy accounts; docs/performance.md).
 *
 * BURST (docs/plans.md): a sliding log. The account hash's BURST_FIELD holds the Redis times
 * (µs, STAMP digits each, oldest first) of its last admitted requests; a request skips the
 * entries that left the window (at least WINDOW old) and is admitted when fewer than LIMIT
 * remain, which it then writes back with its own time appended. So any WINDOW-long span of
 * Redis time holds at most LIMIT admissions, whatever the number of gateways: they all read
 * one clock, Redis' TIME, once per call. It is decided after the allowance, so a used-up
 * account hears that rather than a wait; a request over it is taken back like one over the cap
 * (not counted, not in the ledger, no threshold). The log rides on the account hash, which the
 * script reads anyway: one field more in its HMGET and one HSET per admitted request, the least
 * a shared window can cost (the hash's own slot, so Cluster too). It holds at most LIMIT
 * entries, and an account with no burst limit never reads or writes it.
 *
 * The limit is the caller's effective one (the plan's or the account's plus the period's grants),
 * and the record opened here takes it as the period's limit before grants: a grant opens its
 * period's record itself (accounts/lua.ts GRANT), so a record opened here is of a period without
 * grants at the revision checked.
 */
export const CONSUME = `${OPENED}${MARK}
local function record(arg) return string.match(arg, '^(%d+) (%d+) (.*)$') end
local clock, stamp
local deadline = tonumber(ARGV[#ARGV - ${CONSUME_TAIL} + ${TAIL.deadline}])
if deadline > 0 then
  clock = redis.call('TIME')
  if clock[1] * 1000 + math.floor(clock[2] / 1000) > deadline then
    return redis.error_reply('EXPIRED the caller stopped waiting for this consume')
  end
end
local day = ARGV[#ARGV - ${CONSUME_TAIL} + ${TAIL.day}]
local notes = {}
for i, l, key in string.gmatch(ARGV[#ARGV - ${CONSUME_TAIL} + ${TAIL.notes}], '(%d+):(%d):([^,]*)') do
  notes[tonumber(i)] = { l == '1', key ~= '' and key or nil }
end
local out = {}
-- READ (see above): an account's fields as this call last read them, for its next request in it.
local seen = {}
for i = 0, #KEYS / ${CONSUME_KEYS} - 1 do
  local k, a = ${CONSUME_KEYS} * i, ${CONSUME_ARGS} * i
  local account, counter, days = KEYS[k + ${KEY.account}], ARGV[a + ${ARG.counter}], ARGV[a + ${ARG.days}]
  local code, used = 0, 0
  local burst, most, window, log, from, now, held, oldest = ARGV[a + ${ARG.burst}]
  local revision, note, touch, load = ARGV[a + ${ARG.revision}], notes[i], nil, false
  if note then load, touch = note[1], note[2] end
  local state
  if burst ~= '' then state = redis.call('HMGET', account, 'revision', 'status', '${HINT_DAY}', '${HINT_DAYS}', '${BURST_FIELD}')
  else
    state = seen[account]
    if not state then
      state = redis.call('HMGET', account, 'revision', 'status', '${HINT_DAY}', '${HINT_DAYS}')
      seen[account] = state
    end
  end
  if state[1] ~= revision then code = 3
  elseif state[2] ~= 'active' then code = 2
  else
    -- BURST (see above): the admissions that left the window are skipped first.
    if burst ~= '' then
      most, window = string.match(burst, '^(%d+) (%d+)$')
      most, window = tonumber(most), tonumber(window) * 1000
      clock = clock or redis.call('TIME')
      -- Written as text: Lua would print a number this large in exponent form.
      stamp = stamp or clock[1] .. string.format('%06d', tonumber(clock[2]))
      now, log, from = tonumber(stamp), state[5] or '', 1
      while from < #log and now - tonumber(string.sub(log, from, from + ${STAMP - 1})) >= window do
        from = from + ${STAMP}
      end
      held = (#log - from + 1) / ${STAMP}
      if held > 0 then oldest = tonumber(string.sub(log, from, from + ${STAMP - 1})) end
    end
    used = redis.call('INCR', counter)
    if used == 1 then redis.call('PEXPIREAT', counter, (record(ARGV[a + ${ARG.record}]))) end
    if used > tonumber(ARGV[a + ${ARG.cap}]) then
      code = 1
      used = redis.call('DECR', counter)
    elseif most and held >= most then
      code = 4
      used = redis.call('DECR', counter)
    elseif most then
      redis.call('HSET', account, '${BURST_FIELD}', string.sub(log, from) .. stamp)
      held = held + 1
      oldest = oldest or now
    end
    -- The ledger (ledger-lua.ts): nothing for a day and period already marked, unless the
    -- counter was just made (one that expired while the hint still named its days, say).
    if code == 0 and (state[3] ~= day or state[4] ~= days or used == 1) then
      seen[account] = nil
      if mark(account, days, day, used, state[3]) then
        local expiry, limit, meta = record(ARGV[a + ${ARG.record}])
        opened(account, days, limit, expiry, meta)
      end
    end
    if touch and code == 0 then redis.call('HSET', account, 'lu:' .. touch, day) end
    -- ALERT (see above)
    local al = ARGV[a + ${ARG.alerts}]
    if code < 2 and al ~= '' and used >= tonumber(string.sub(al, 1, string.find(al, ':', 1, true) - 1)) then
      local fired, outbox = counter .. ':alerted', counter .. ':outbox'
      local expiry, limit = record(ARGV[a + ${ARG.record}])
      for count, pct in string.gmatch(al, '(%d+):(%d+)') do
        if used >= tonumber(count) and redis.call('HSETNX', fired, pct, used) == 1 then
          redis.call('RPUSH', outbox, pct .. ':' .. used .. ':' .. limit)
          redis.call('PEXPIREAT', fired, expiry)
          redis.call('PEXPIREAT', outbox, expiry)
        end
      end
    end
    -- end ALERT
  end
  out[#out + 1] = code
  out[#out + 1] = used
  if burst ~= '' then
    -- The window's room after this request, and when it next grows (ms; 0: it is empty).
    out[#out + 1] = most and math.max(0, most - held) or 0
    out[#out + 1] = oldest and math.ceil((oldest + window - now) / 1000) or 0
  end
  if load and code ~= 2 and code ~= 3 then out[#out + 1] = redis.call('HGETALL', account) end
end
return out
`;
