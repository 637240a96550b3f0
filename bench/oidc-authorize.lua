-- wrk script for bench/oidc: GET /oidc/authorize with a signed-in browser's cookie, a first-party
-- client and PKCE S256 (one challenge for all: the verifier is the same in every exchange), each
-- answered 302 to the client with a code. Writes the codes, one a line, to FILE.<thread>.
-- args: QUERY (the authorization request without state and nonce) COOKIE FILE
dofile("bench/oidc-common.lua")

function init(args)
  query, made, bad, n = args[1], 0, 0, 0
  wrk.headers["Cookie"] = args[2]
  out = io.open(args[3] .. "." .. id, "w")
  out:setvbuf("line")
end

function request()
  n = n + 1
  return wrk.format("GET", "/oidc/authorize?" .. query .. "&state=s" .. id .. "x" .. n .. "&nonce=n" .. id .. "x" .. n)
end

function response(status, headers, body)
  local location = headers["Location"] or headers["location"] or ""
  local code = location:match("[?&]code=([^&]+)")
  if status == 302 and code then
    out:write(code, "\n")
    made = made + 1
  else
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local made, bad = 0, 0
  for _, thread in ipairs(threads) do
    made = made + thread:get("made")
    bad = bad + thread:get("bad")
  end
  io.write(string.format("AUTHORIZE made=%d bad=%d us=%d p99_us=%d\n", made, bad, summary.duration,
    latency:percentile(99)))
end
