-- wrk script: each request names the next API key from a file, so the load spreads over many
-- accounts and none runs out. Usage: wrk ... URL -- PATH_PREFIX KEYS_FILE
-- done() prints one JSON line that bench/run.mjs parses.
local keys = {}
local n = 0
local i = 0
local prefix

function init(args)
  prefix = args[1]
  for line in io.lines(args[2]) do
    n = n + 1
    keys[n] = line
  end
  -- Threads (and runs) start at different keys.
  i = math.random(n)
end

function request()
  i = i % n + 1
  return wrk.format("GET", prefix .. keys[i])
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
