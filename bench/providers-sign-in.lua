-- wrk script for bench/providers: POST /v1/provider/sign-in with one pre-minted ID token per
-- request (each token can be used once: a pool, thread K of N takes every Nth line of FILE from
-- line K). A connection with no token left asks /healthz meanwhile, slowly (not counted); a thread
-- stops when all its tokens are answered, or when none has been answered for 2 s while it had none
-- left to send, and then creates FILE.stopped.<thread> (bench/providers sends wrk SIGINT once
-- every thread has stopped). The rate is the sign-ins over the time from the first request to the
-- last answer (the monotonic clock), across threads; p50 and p99 are wrk's (the tail's few
-- /healthz, one a second per connection, count too).
-- args: FILE THREADS PROVIDER
dofile("bench/oidc-common.lua")

function init(args)
  pool_load(args[1], args[2])
  provider = args[3]
  wrk.headers["Content-Type"] = "application/json"
end

delay = pool_delay
-- The tail's /healthz once a second per connection: they are few beside the sign-ins in wrk's
-- latency percentiles.
pool_tail_ms = 1000

function request()
  local token = pool_next()
  if token == nil then return wrk.format("GET", "/healthz") end
  return wrk.format("POST", "/v1/provider/sign-in", nil,
    '{"provider":"' .. provider .. '","providerIdToken":"' .. token .. '"}')
end

function response(status, headers, body)
  if status == 200 and body:find('"session"', 1, true) then
    pool_answered(true)
  elseif status ~= 200 or body:find('"error"', 1, true) then
    pool_answered(false)
    if bad == 1 then io.stderr:write("sign-in answered " .. status .. ": " .. body .. "\n") end
  end
  pool_stop_when_spent()
end

function done(summary, latency, requests)
  local ok, bad, unanswered, us = pool_totals()
  io.write(string.format("SIGNIN ok=%d bad=%d unanswered=%d us=%d p50_us=%d p99_us=%d\n", ok, bad, unanswered, us,
    latency:percentile(50), latency:percentile(99)))
end
