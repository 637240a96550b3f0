# Shared by the integration scripts that drive a pytest module (sourced; not a test itself):
# run_pytest FILE runs it with a temp work dir in E2E_WORK, ends what it started on exit, and
# passes only when every `def test_` in FILE ran and none failed or was skipped (pytest's 5 for
# "no tests" and a skip are failures here). POSTERN_BIN picks the binary; E2E_KEEP=1 keeps the dir.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
python="${POSTERN_PYTHON:-$root/.venv/bin/python}"
export POSTERN_BIN="${POSTERN_BIN:-$root/.build/debug/postern}"
[ -x "$POSTERN_BIN" ] || { echo "FAIL: no postern binary at $POSTERN_BIN"; exit 1; }

pytest_work=$(mktemp -d /tmp/postern-pytest.XXXXXX)
export E2E_WORK="$pytest_work/run"
pytest_pid=
pytest_cleanup() {
  # The test stops what it starts (SIGTERM unwinds its fixtures); then any process group it
  # noted that is still there (Python killed hard) is ended, by id.
  if [ -n "$pytest_pid" ] && kill -0 "$pytest_pid" 2>/dev/null; then
    kill -TERM "$pytest_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pytest_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pytest_pid" 2>/dev/null || true
  fi
  if [ -f "$E2E_WORK/pgids" ]; then
    while read -r group; do
      kill -0 -- "-$group" 2>/dev/null || continue
      echo "pytest: ending leftover process group $group"
      kill -TERM -- "-$group" 2>/dev/null || true; sleep 1; kill -KILL -- "-$group" 2>/dev/null || true
    done <"$E2E_WORK/pgids"
  fi
  if [ "${E2E_KEEP:-}" = 1 ]; then echo "kept $pytest_work"; else rm -rf "$pytest_work"; fi
}
trap pytest_cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# require_chromium: fails the script at once when Chromium or its driver is missing (CHROMIUM and
# CHROMEDRIVER pick them).
require_chromium() {
  local tool
  for tool in "${CHROMIUM:-/usr/bin/chromium}" "${CHROMEDRIVER:-/usr/bin/chromedriver}"; do
    [ -x "$tool" ] || { echo "FAIL: $tool is missing (scripts/setup installs chromium and chromium-driver)"; exit 1; }
  done
}

# run_pytest FILE [LOG]: LOG (relative to E2E_WORK) is shown on failure.
run_pytest() {
  local file=$1 log=${2:-serve.log} name start status summary expected elapsed
  name=$(basename "$file" .py)
  start=$(date +%s)
  set +e
  # -p no:cacheprovider: nothing written into the repo; -c /dev/null: no stray config applies.
  # In the background with wait, so a TERM to the script is acted on at once (see the cleanup).
  "$python" -m pytest -c /dev/null -p no:cacheprovider -s -v -rfEs --junitxml="$pytest_work/junit.xml" "$file" &
  pytest_pid=$!
  wait "$pytest_pid"
  status=$?
  pytest_pid=
  set -e
  elapsed=$(( $(date +%s) - start ))
  summary=$("$python" - "$pytest_work/junit.xml" <<'PY'
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
  expected=$(grep -c '^def test_' "$file")
  echo "$name: $summary expected=$expected pytest=$status in ${elapsed}s"
  if [ "$status" -ne 0 ] || [ "$summary" != "tests=$expected failures=0 errors=0 skipped=0" ]; then
    echo "FAIL: $name (pytest exit $status; $summary; want tests=$expected with none failed or skipped)"
    [ -f "$E2E_WORK/$log" ] && { echo "--- last lines of $log"; tail -n 30 "$E2E_WORK/$log"; }
    return 1
  fi
  echo "$name: ok"
}
