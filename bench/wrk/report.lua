-- Shared by the scenario scripts: prints one machine-readable line the harness parses
-- (HB_JSON {...}), with the latency percentiles in microseconds and the number of times a
-- thread ran through its request list ("wrapped": a fresh-tokens run must never repeat a token).
local M = {}
local threads = {}

function M.setup(thread)
  table.insert(threads, thread)
end

function M.done(summary, latency, requests)
  local wrapped = 0
  for _, t in ipairs(threads) do
    wrapped = wrapped + (tonumber(t:get("wrapped")) or 0)
  end
  local e = summary.errors
  io.write(string.format(
    'HB_JSON {"requests":%d,"durationUs":%d,"bytes":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"statusErrors":%d,"timeouts":%d,"p50Us":%d,"p90Us":%d,"p99Us":%d,"maxUs":%d,"wrapped":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, wrapped))
end

return M
