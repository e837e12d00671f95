-- Requests prepared once from a list, so request() only picks a ready string.
--   wrk ... -s bench/wrk/list.lua <url> -- file <path> seq|random   (lines "<path> <token>")
--   wrk ... -s bench/wrk/list.lua <url> -- ids <count> <prefix> <token> <seed>  (prefix..1 .. prefix..count, random)
-- The seed differs between warm-up and measured run (else the warm-up would have cached exactly
-- the customers the run asks for first) and is the same for every server (same sequence for all).
-- Headers given with -H (Accept) are kept; Authorization comes from the list or the argument.
-- Scenarios: tokens (seq), fresh-tokens (seq; "wrapped" counts reuse), spread and wide (ids).
package.path = "./bench/wrk/?.lua;" .. package.path
local report = require("report")
setup = report.setup
done = report.done
wrapped = 0

local reqs = {}
local n = 0
local i = 0
local random = false

local function add(path, token)
  local headers = {}
  for k, v in pairs(wrk.headers) do headers[k] = v end
  headers["Authorization"] = "Bearer " .. token
  n = n + 1
  reqs[n] = wrk.format("GET", path, headers)
end

function init(args)
  if args[1] == "file" then
    random = args[3] == "random"
    for line in io.lines(args[2]) do
      local sp = line:find(" ", 1, true)
      if sp then add(line:sub(1, sp - 1), line:sub(sp + 1)) end
    end
  elseif args[1] == "ids" then
    random = true
    math.randomseed(tonumber(args[5]) or 1)
    for id = 1, tonumber(args[2]) do add(args[3] .. id, args[4]) end
  end
  if n == 0 then error("list.lua: no requests (args: file <path> seq|random, or ids <count> <prefix> <token> <seed>)") end
end

function request()
  if random then return reqs[math.random(n)] end
  i = i + 1
  if i > n then
    i = 1
    wrapped = wrapped + 1
  end
  return reqs[i]
end
