-- wrk script for bench/http: POST /v1/email-link/send with a distinct address per request
-- (u<N>@example.com, N unique across threads and across runs: pass the run number after --; a
-- second argument K > 0 spreads them over K recipient domains, u<N>@d<N mod K>.example.com).
local threads = 0

function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end

function init(args)
  counter = ((tonumber(args[1]) or 0) * 64 + id) * 100000000
  domains = tonumber(args[2]) or 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  counter = counter + 1
  local domain = "example.com"
  if domains > 0 then domain = "d" .. (counter % domains) .. ".example.com" end
  return wrk.format(nil, nil, nil, '{"email":"u' .. counter .. '@' .. domain .. '"}')
end
