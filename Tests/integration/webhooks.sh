#!/usr/bin/env bash
# Webhooks in the Standard Webhooks format against a real `postern serve` (see webhooks_test.py):
# a local receiver verifies every delivery with the `standardwebhooks` PyPI library (both
# secrets of a rotation), gets every event type of a scripted run, and is down for 5 s in the
# middle: everything queued meanwhile arrives after it is back, none lost, each event's
# webhook-id stable. POSTERN_BIN picks the binary (default .build/debug/postern); E2E_KEEP=1
# keeps the temp dir.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
run_pytest "$root/Tests/integration/webhooks_test.py" webhooks/serve.log
