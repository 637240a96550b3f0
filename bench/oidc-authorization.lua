-- wrk script for bench/oidc: whole authorizations with a signed-in browser, one connection per
-- thread (run with -c equal to -t): GET /oidc/authorize (302 with a code), then POST /oidc/token
-- with that code, then the next. Times each pair with the monotonic clock (LuaJIT's ffi) and
-- reports the count and percentiles of the pairs, not of the single requests.
-- args: QUERY COOKIE BASIC REDIRECT_URI VERIFIER
dofile("bench/oidc-common.lua")

function init(args)
  query, cookie, basic = args[1], args[2], args[3]
  tail = "&redirect_uri=" .. args[4] .. "&code_verifier=" .. args[5]
  ok, bad, n, pending, sent, started = 0, 0, 0, nil, nil, 0
  pairs_us = {}
end

function request()
  if pending then
    sent = "token"
    local code = pending
    pending = nil
    return wrk.format("POST", "/oidc/token", { ["Authorization"] = "Basic " .. basic,
      ["Content-Type"] = "application/x-www-form-urlencoded" }, "grant_type=authorization_code&code=" .. code .. tail)
  end
  n = n + 1
  sent = "authorize"
  started = now_us()
  return wrk.format("GET", "/oidc/authorize?" .. query .. "&state=s" .. id .. "x" .. n .. "&nonce=n" .. id .. "x" .. n,
    { ["Cookie"] = cookie })
end

function response(status, headers, body)
  if sent == "authorize" then
    local location = headers["Location"] or headers["location"] or ""
    pending = status == 302 and location:match("[?&]code=([^&]+)") or nil
    if not pending then bad = bad + 1 end
  elseif status == 200 and body:find('"id_token"', 1, true) then
    ok = ok + 1
    pairs_us[#pairs_us + 1] = now_us() - started
  else
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local all, ok, bad = {}, 0, 0
  for _, thread in ipairs(threads) do
    ok = ok + thread:get("ok")
    bad = bad + thread:get("bad")
    for _, v in ipairs(thread:get("pairs_us")) do all[#all + 1] = v end
  end
  table.sort(all)
  local function pct(p) return #all > 0 and all[math.max(1, math.ceil(#all * p / 100))] or 0 end
  io.write(string.format("AUTHORIZATION ok=%d bad=%d us=%d p50_us=%d p99_us=%d\n", ok, bad, summary.duration,
    pct(50), pct(99)))
end
