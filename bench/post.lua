-- post.lua - wrk script: POST the file named by $WH_BENCH_PAYLOAD as JSON
-- (used by bench.py and bench/inject/run.sh).
local f = assert(io.open(os.getenv("WH_BENCH_PAYLOAD"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
