#!/usr/bin/env bash
# Three `postern serve` on one PostgreSQL database (multi_daemon.py): 10,000 send-links spread
# over them with kill -9 of one in the middle (0 lost, duplicates only of the dead one's
# in-flight deliveries, its claims delivered by the others within 15 s of its death), one address
# sent to 6 times across the 3 (5 mails), and one client address over all 3 held to the single
# --ip-per-minute limit. Uses the server POSTERN_TEST_POSTGRES names (scripts/test starts one),
# else starts and stops its own. MULTI_DAEMON_COUNT overrides the 10,000.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python="${POSTERN_PYTHON:-$root/.venv/bin/python}"
export POSTERN_BIN="${POSTERN_BIN:-$root/.build/debug/postern}"
export POSTERN_TEMPLATES="$root/templates"
[ -x "$POSTERN_BIN" ] || { echo "FAIL: no postern binary at $POSTERN_BIN"; exit 1; }
source "$root/Tests/integration/postgres_lib.bash"
work=$(mktemp -d /tmp/postern-multi.XXXXXX)
driver=
cleanup() {
  if [ -n "$driver" ] && kill -0 "$driver" 2>/dev/null; then
    kill -TERM "$driver" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$driver" 2>/dev/null || break; sleep 0.1; done
  fi
  postgres_stop
  if [ "${MULTI_DAEMON_KEEP:-}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 143' TERM
postgres_server
database=$(postgres_database multi)
set +e
"$python" "$root/Tests/integration/multi_daemon.py" "$database" "$work" &
driver=$!
wait "$driver"
status=$?
driver=
set -e
if [ "$status" -ne 0 ]; then
  for log in "$work"/*/serve.log; do echo "== $log"; tail -n 20 "$log"; done
  echo "FAIL: multi-daemon ($status)"
  exit 1
fi
