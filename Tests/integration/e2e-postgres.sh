#!/usr/bin/env bash
# The end-to-end test (e2e_test.py, as e2e.sh runs it) against a daemon on PostgreSQL: a fresh
# database on the server POSTERN_TEST_POSTGRES names (scripts/test starts one), or on a throwaway
# server this script starts with scripts/postgres and stops at exit. The master key file is the
# PostgreSQL default, ./postern.key in the test's work directory.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
for tool in "${CHROMIUM:-/usr/bin/chromium}" "${CHROMEDRIVER:-/usr/bin/chromedriver}"; do
  [ -x "$tool" ] || { echo "FAIL: $tool is missing (scripts/setup installs chromium and chromium-driver)"; exit 1; }
done
server_dir=
cleanup() {
  pytest_cleanup
  [ -z "$server_dir" ] || "$root/scripts/postgres" stop "$server_dir"
}
trap cleanup EXIT
conn="${POSTERN_TEST_POSTGRES:-}"
if [ -z "$conn" ]; then
  started=$("$root/scripts/postgres" start)
  server_dir=$(sed -n 1p <<<"$started")
  conn=$(sed -n 2p <<<"$started")
fi
name="e2e_$(date +%s)_$$"
psql "$conn" -qAt -v ON_ERROR_STOP=1 -c "CREATE DATABASE $name" >/dev/null
export E2E_DATABASE="$conn dbname=$name"
run_pytest "$root/Tests/integration/e2e_test.py"
