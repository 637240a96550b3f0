-- wrk script for bench/soak: POST /v1/email-link/send with a distinct address per request, paced
-- to a steady rate. Args after --: SLICE (unique per wrk run) RATE (requests/s over all threads)
-- THREADS. Each thread keeps its own schedule, start + n / (RATE / THREADS), on the monotonic
-- clock (LuaJIT's FFI to clock_gettime), so a slow answer is caught up and the rate stays steady.
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } soak_timespec;
  int clock_gettime(int clk_id, soak_timespec *tp);
]]
local ts = ffi.new("soak_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end

function init(args)
  local slice = tonumber(args[1]) or 0
  local rate = tonumber(args[2]) or 1000
  local nthreads = tonumber(args[3]) or 1
  counter = (slice * 64 + id) * 10000000
  period = 1000 / (rate / nthreads)
  start = nil
  n = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function delay()
  local t = now_ms()
  if start == nil then start = t end
  local due = start + n * period
  n = n + 1
  if due <= t then return 0 end
  return due - t
end

function request()
  counter = counter + 1
  return wrk.format(nil, nil, nil, '{"email":"s' .. counter .. '@example.com"}')
end
