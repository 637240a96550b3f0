-- wrk script for bench/oidc: POST /oidc/token, grant_type=authorization_code, client_secret_basic,
-- one pre-made code per request (thread K of N takes every Nth line of FILE from line K). A
-- connection with no code left asks /healthz meanwhile, slowly (not counted); a thread stops when all its
-- codes are answered, or when none has been answered for 2 s while it had none left to send (a
-- code lost to a socket error), and then creates FILE.stopped.<thread> (wrk itself sleeps out its -d: bench/oidc
-- sends it SIGINT once every thread has stopped). The rate is the exchanges over the time from
-- the first request to the last exchange (the monotonic clock, by LuaJIT's ffi), across threads.
-- args: FILE THREADS BASIC REDIRECT_URI VERIFIER
dofile("bench/oidc-common.lua")

function init(args)
  codes, at, ok, bad, answered, first_us, last_us = {}, 1, 0, 0, 0, 0, 0
  local line = 0
  for code in io.lines(args[1]) do
    if line % tonumber(args[2]) == id then codes[#codes + 1] = code end
    line = line + 1
  end
  tail = "&redirect_uri=" .. args[4] .. "&code_verifier=" .. args[5]
  stopped = args[1] .. ".stopped." .. id
  wrk.headers["Authorization"] = "Basic " .. args[3]
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
end

-- A connection with no code left waits 100 ms before each /healthz, so the tail costs the daemon
-- nothing worth counting in its CPU per exchange.
function delay()
  if at > #codes then return 100 end
  return 0
end

function request()
  local code = codes[at]
  if code == nil then return wrk.format("GET", "/healthz") end
  if at == 1 then first_us = now_us() end
  at = at + 1
  return wrk.format("POST", "/oidc/token", nil, "grant_type=authorization_code&code=" .. code .. tail)
end

function response(status, headers, body)
  if body:find('"id_token"', 1, true) then
    ok = ok + 1
    answered = answered + 1
    last_us = now_us()
  elseif status ~= 200 then
    bad = bad + 1
    answered = answered + 1
    last_us = now_us()
    if bad == 1 then io.stderr:write("token answered " .. status .. ": " .. body .. "\n") end
  end
  if answered >= #codes or (at > #codes and now_us() - math.max(last_us, first_us) > 2000000) then
    io.open(stopped, "w"):close()
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local ok, bad, sent, first, last = 0, 0, 0, nil, 0
  for _, thread in ipairs(threads) do
    ok = ok + thread:get("ok")
    bad = bad + thread:get("bad")
    sent = sent + thread:get("at") - 1
    local f, l = thread:get("first_us"), thread:get("last_us")
    if f > 0 and (first == nil or f < first) then first = f end
    if l > last then last = l end
  end
  -- unanswered: sent, but no token answer nor error came back (wrk loses about one a run, with a
  -- stand-in server too); not counted in the rate.
  io.write(string.format("TOKEN ok=%d bad=%d unanswered=%d us=%d p99_us=%d\n", ok, bad, sent - ok - bad,
    first and last > first and last - first or 0, latency:percentile(99)))
end
