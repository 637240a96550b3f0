# Shared by the outbox integration tests (sourced; not a test itself).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bench="$root/.build/debug/postern-bench"
python="${POSTERN_PYTHON:-$root/.venv/bin/python}"
server_py="$root/Tests/integration/smtp_server.py"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$root"

free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_server NAME ARGS... : starts smtp_server.py writing to $work/NAME/, sets server_pid.
start_server() {
  local name=$1; shift
  mkdir -p "$work/$name"
  "$python" "$server_py" --out "$work/$name/out" "$@" >>"$work/$name/server.log" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  for _ in $(seq 100); do grep -q listening "$work/$name/server.log" 2>/dev/null && return 0; sleep 0.1; done
  echo "the SMTP server did not start"; cat "$work/$name/server.log"; return 1
}

stop_server() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# sql DB QUERY : prints the rows, one per line, columns separated by |.
sql() { "$python" -c 'import sqlite3,sys; [print("|".join("" if v is None else str(v) for v in r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])]' "$1" "$2"; }

# delivered_count DIR RCPT : how many messages the server accepted for RCPT.
delivered_count() { ls "$1" 2>/dev/null | grep -c -- "-$2.eml$" || true; }

fail() { echo "FAIL: $*"; exit 1; }
