-- mix.lua - wrk script for bench/soak/soak.py: every connection sends a fixed
-- mix of requests, interleaved, over HTTP/1.1 keep-alive (what the API server
-- does).  Per 100 requests: 60 POST /inject (the corpus' hello pod), 20 POST
-- /validate (a valid DestinationRule), 5 GET /healthz, 5 GET /readyz,
-- 5 GET /metrics, and 5 that a hostile or broken client sends: 2 bodies that
-- are not JSON (400), 1 wrong Content-Type (415), 1 unknown path (404) and
-- 1 DestinationRule that validation denies (200, allowed: false).
-- Inputs: $WH_SOAK_INJECT and $WH_SOAK_VALIDATE (AdmissionReview files).
local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local json = {["Content-Type"] = "application/json"}

function init(args)
  local pod = slurp(os.getenv("WH_SOAK_INJECT"))
  local dr = slurp(os.getenv("WH_SOAK_VALIDATE"))
  local denied = dr:gsub('"host":"[^"]*"', '"host":""', 1)
  local kinds = {
    {60, wrk.format("POST", "/inject", json, pod)},
    {20, wrk.format("POST", "/validate", json, dr)},
    {5, wrk.format("GET", "/healthz")},
    {5, wrk.format("GET", "/readyz")},
    {5, wrk.format("GET", "/metrics")},
    {2, wrk.format("POST", "/validate", json, '{"kind":"AdmissionReview","request":{"uid":')},
    {1, wrk.format("POST", "/inject", {["Content-Type"] = "text/plain"}, pod)},
    {1, wrk.format("GET", "/no-such-path")},
    {1, wrk.format("POST", "/validate", json, denied)},
  }
  -- A fixed shuffle (the same in every run) so that kinds interleave.
  schedule = {}
  for _, k in ipairs(kinds) do
    for _ = 1, k[1] do schedule[#schedule + 1] = k[2] end
  end
  math.randomseed(15)
  for i = #schedule, 2, -1 do
    local j = math.random(i)
    schedule[i], schedule[j] = schedule[j], schedule[i]
  end
  n = 0
end

function request()
  n = n % #schedule + 1
  return schedule[n]
end
