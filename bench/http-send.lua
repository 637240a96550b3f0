-- wrk script for bench/http: POST /v1/email-link/send with a distinct address per request
-- (u<N>@example.com, N unique across threads and across runs: pass the run number after --).
local threads = 0

function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end

function init(args)
  counter = ((tonumber(args[1]) or 0) * 64 + id) * 100000000
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  counter = counter + 1
  return wrk.format(nil, nil, nil, '{"email":"u' .. counter .. '@example.com"}')
end
