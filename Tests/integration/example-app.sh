#!/usr/bin/env bash
# The example app (Examples/PosternDemo, on the PosternAuth client alone) driven through its whole
# flow by scripted stdin against a real `postern serve`: FUAP's welcome → link sent → code →
# onboarding → profile edit → password → sign out → password offered; and RxFireAuth's guest →
# sign-in on a second device → migration prompt → LoginDescriptor; against `--challenge always`,
# --solve-challenge and the welcome flow paying its proof of work. See example_app_test.py.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
export POSTERN_DEMO_BIN="${POSTERN_DEMO_BIN:-$root/.build/debug/postern-demo}"
[ -x "$POSTERN_DEMO_BIN" ] || { echo "FAIL: no postern-demo binary at $POSTERN_DEMO_BIN"; exit 1; }
run_pytest "$root/Tests/integration/example_app_test.py" demo/serve.log
