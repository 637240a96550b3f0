#!/usr/bin/env bash
# Attacks on the HTTP layer against a real `postern serve` (see attack_http_test.py): 2,000 slow
# connections from one address, spoofed X-Forwarded-For against the per-IP limit, conflicting
# body framing (request smuggling), JSON sent as text/plain, and /metrics without the token.
# POSTERN_BIN picks the binary (default .build/debug/postern); ATTACK_KEEP=1 keeps the temp dir.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python="${POSTERN_PYTHON:-$root/.venv/bin/python}"
export POSTERN_BIN="${POSTERN_BIN:-$root/.build/debug/postern}"
[ -x "$POSTERN_BIN" ] || { echo "FAIL: no postern binary at $POSTERN_BIN"; exit 1; }

work=$(mktemp -d /tmp/postern-attack.XXXXXX)
export ATTACK_WORK="$work/run"
pytest_pid=
cleanup() {
  # The test stops the daemons it starts (SIGTERM unwinds its fixtures).
  if [ -n "$pytest_pid" ] && kill -0 "$pytest_pid" 2>/dev/null; then
    kill -TERM "$pytest_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pytest_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pytest_pid" 2>/dev/null || true
  fi
  if [ "${ATTACK_KEEP:-}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

start=$(date +%s)
set +e
"$python" -m pytest -c /dev/null -p no:cacheprovider -s -v -rfEs --junitxml="$work/junit.xml" \
  "$root/Tests/integration/attack_http_test.py" &
pytest_pid=$!
wait "$pytest_pid"
status=$?
pytest_pid=
set -e
elapsed=$(( $(date +%s) - start ))

# It must have run every test and skipped none.
summary=$("$python" - "$work/junit.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception as e:
    print(f"tests=0 failures=0 errors=1 skipped=0 (no report: {e})"); sys.exit()
suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
count = lambda k: sum(int(s.get(k, 0)) for s in suites)
print(f"tests={count('tests')} failures={count('failures')} errors={count('errors')} skipped={count('skipped')}")
PY
)
# The framing test runs once per case (3 cases).
defined=$(grep -c '^def test_' "$root/Tests/integration/attack_http_test.py")
expected=$((defined + 2))
echo "attack-http: $summary expected=$expected pytest=$status in ${elapsed}s"
if [ "$status" -ne 0 ] || [ "$summary" != "tests=$expected failures=0 errors=0 skipped=0" ]; then
  echo "FAIL: attack-http (pytest exit $status; $summary; want tests=$expected with none failed or skipped)"
  for log in "$ATTACK_WORK"/*/serve.log; do
    [ -f "$log" ] && { echo "--- last lines of $log"; tail -n 20 "$log"; }
  done
  exit 1
fi
echo "attack-http: ok"
