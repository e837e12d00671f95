-- One fixed request (headers from -H): wrk builds it once, the cheapest load there is.
-- Scenarios: hot, conditional (If-None-Match given with -H), herd warm-up.
package.path = "./bench/wrk/?.lua;" .. package.path
local report = require("report")
setup = report.setup
done = report.done
wrapped = 0
