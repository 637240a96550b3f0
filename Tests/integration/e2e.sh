#!/usr/bin/env bash
# End-to-end: `postern serve` on the embedded defaults (SQLite in a temp dir) with aiosmtpd over
# STARTTLS + AUTH, driven over HTTP, through `postern handle-link` and in headless Chromium
# (Selenium): anonymous → email link wrapped by Safe Links → LoginDescriptor; a second device →
# MIGRATION_REQUIRED → allowMigration; replay refused; password sign-up → confirm; a reset on the
# hosted page after a mail scanner's HEAD and GETs; change of address → recovery. See e2e_test.py.
# POSTERN_BIN picks the binary (default .build/debug/postern); E2E_KEEP=1 keeps the temp dir.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python="${POSTERN_PYTHON:-$root/.venv/bin/python}"
export POSTERN_BIN="${POSTERN_BIN:-$root/.build/debug/postern}"
[ -x "$POSTERN_BIN" ] || { echo "FAIL: no postern binary at $POSTERN_BIN"; exit 1; }
for tool in "${CHROMIUM:-/usr/bin/chromium}" "${CHROMEDRIVER:-/usr/bin/chromedriver}"; do
  [ -x "$tool" ] || { echo "FAIL: $tool is missing (scripts/setup installs chromium and chromium-driver)"; exit 1; }
done

work=$(mktemp -d /tmp/postern-e2e.XXXXXX)
export E2E_WORK="$work/run"
pytest_pid=
cleanup() {
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
      echo "e2e: ending leftover process group $group"
      kill -TERM -- "-$group" 2>/dev/null || true; sleep 1; kill -KILL -- "-$group" 2>/dev/null || true
    done <"$E2E_WORK/pgids"
  fi
  if [ "${E2E_KEEP:-}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

start=$(date +%s)
set +e
# -p no:cacheprovider: nothing written into the repo; -c /dev/null: no stray config applies.
# In the background with wait, so a TERM to this script is acted on at once (see cleanup).
"$python" -m pytest -c /dev/null -p no:cacheprovider -s -v -rfEs --junitxml="$work/junit.xml" \
  "$root/Tests/integration/e2e_test.py" &
pytest_pid=$!
wait "$pytest_pid"
status=$?
pytest_pid=
set -e
elapsed=$(( $(date +%s) - start ))

# It must have run every test and skipped none: pytest's 5 (no tests) or a skip is a failure here.
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
expected=$(grep -c '^def test_' "$root/Tests/integration/e2e_test.py")
echo "e2e: $summary expected=$expected pytest=$status in ${elapsed}s"
if [ "$status" -ne 0 ] || [ "$summary" != "tests=$expected failures=0 errors=0 skipped=0" ]; then
  echo "FAIL: e2e (pytest exit $status; $summary; want tests=$expected with none failed or skipped)"
  [ -f "$E2E_WORK/serve.log" ] && { echo "--- last lines of serve.log"; tail -n 30 "$E2E_WORK/serve.log"; }
  exit 1
fi
echo "e2e: ok"
