-- What the wrk scripts of bench/oidc and bench/providers share (loaded by each with dofile; the benches run from the
-- checkout's root): the threads, each numbered (`id`), and the monotonic clock in microseconds
-- (LuaJIT's ffi).
threads = {}
local count = 0

function setup(thread)
  thread:set("id", count)
  count = count + 1
  table.insert(threads, thread)
end

local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock, bench_timespec *now);
]]
local clock = ffi.new("bench_timespec")

function now_us()
  ffi.C.clock_gettime(1, clock)
  return tonumber(clock.tv_sec) * 1000000 + tonumber(clock.tv_nsec) / 1000
end

-- A pool of one-use items (bench/oidc's codes, bench/providers' ID tokens) spent by the threads:
-- thread K of N takes every Nth line of FILE from line K. The counters (`ok`, `bad`, `at` the
-- next to send, `first_us` and `last_us`) are the thread's globals, summed by pool_totals.
function pool_load(file, thread_count)
  pool, at, ok, bad, answered, first_us, last_us = {}, 1, 0, 0, 0, 0, 0
  local line = 0
  for item in io.lines(file) do
    if line % tonumber(thread_count) == id then pool[#pool + 1] = item end
    line = line + 1
  end
  stopped = file .. ".stopped." .. id
end

-- The next item (the first starts the clock), or nil once the pool is spent.
function pool_next()
  local item = pool[at]
  if item == nil then return nil end
  if at == 1 then first_us = now_us() end
  at = at + 1
  return item
end

-- A connection with no item left waits `pool_tail_ms` (default 100) before each /healthz it sends
-- meanwhile, so the tail costs the daemon nothing worth counting in its CPU per request (a pool's
-- script sets `delay = pool_delay`; wrk calls a global `delay` before every request of a script
-- that has one).
function pool_delay()
  if at > #pool then return pool_tail_ms or 100 end
  return 0
end

-- One item answered, well or not.
function pool_answered(good)
  if good then ok = ok + 1 else bad = bad + 1 end
  answered = answered + 1
  last_us = now_us()
end

-- A thread stops when all its items are answered, or when none has been answered for 2 s while it
-- had none left to send (one lost to a socket error), and then creates FILE.stopped.<thread> (wrk
-- itself sleeps out its -d: the bench sends it SIGINT once every thread has stopped).
function pool_stop_when_spent()
  if answered >= #pool or (at > #pool and now_us() - math.max(last_us, first_us) > 2000000) then
    io.open(stopped, "w"):close()
    wrk.thread:stop()
  end
end

-- Across threads: ok, bad, unanswered (sent, but no answer came back: wrk loses about one a run,
-- with a stand-in server too; not counted in the rate) and the microseconds from the first
-- request to the last answer.
function pool_totals()
  local ok, bad, sent, first, last = 0, 0, 0, nil, 0
  for _, thread in ipairs(threads) do
    ok = ok + thread:get("ok")
    bad = bad + thread:get("bad")
    sent = sent + thread:get("at") - 1
    local f, l = thread:get("first_us"), thread:get("last_us")
    if f > 0 and (first == nil or f < first) then first = f end
    if l > last then last = l end
  end
  return ok, bad, sent - ok - bad, first and last > first and last - first or 0
end
