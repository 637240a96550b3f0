-- wrk script for bench/oidc: POST /oidc/token, grant_type=authorization_code, client_secret_basic,
-- one pre-made code per request (a pool: thread K of N takes every Nth line of FILE from line K). A
-- connection with no code left asks /healthz meanwhile, slowly (not counted); a thread stops when all its
-- codes are answered, or when none has been answered for 2 s while it had none left to send (a
-- code lost to a socket error), and then creates FILE.stopped.<thread> (wrk itself sleeps out its -d: bench/oidc
-- sends it SIGINT once every thread has stopped). The rate is the exchanges over the time from
-- the first request to the last exchange (the monotonic clock, by LuaJIT's ffi), across threads.
-- args: FILE THREADS BASIC REDIRECT_URI VERIFIER
dofile("bench/oidc-common.lua")

function init(args)
  pool_load(args[1], args[2])
  tail = "&redirect_uri=" .. args[4] .. "&code_verifier=" .. args[5]
  wrk.headers["Authorization"] = "Basic " .. args[3]
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
end

delay = pool_delay

function request()
  local code = pool_next()
  if code == nil then return wrk.format("GET", "/healthz") end
  return wrk.format("POST", "/oidc/token", nil, "grant_type=authorization_code&code=" .. code .. tail)
end

function response(status, headers, body)
  if body:find('"id_token"', 1, true) then
    pool_answered(true)
  elseif status ~= 200 then
    pool_answered(false)
    if bad == 1 then io.stderr:write("token answered " .. status .. ": " .. body .. "\n") end
  end
  pool_stop_when_spent()
end

function done(summary, latency, requests)
  local ok, bad, unanswered, us = pool_totals()
  io.write(string.format("TOKEN ok=%d bad=%d unanswered=%d us=%d p99_us=%d\n", ok, bad, unanswered, us, latency:percentile(99)))
end
