#!/usr/bin/env bash
# Webhooks in the Standard Webhooks format against a real `postern serve` (see webhooks_test.py):
# local receivers verify every delivery with the `standardwebhooks` PyPI library (both secrets
# of a rotation) and get every event type of scripted runs; one is down for 30 s in the middle
# (everything arrives after, none lost); endpoints added by `postern webhooks add` and the admin
# API with filters, a rotation, a test event and a removal, mail.* from a real SMTP server (451,
# 550); `kill -9` of the daemon with calls in flight: after a restart nothing is lost and repeats
# keep their webhook-id and body. POSTERN_BIN picks the binary (default .build/debug/postern); E2E_KEEP=1
# keeps the temp dir.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
run_pytest "$root/Tests/integration/webhooks_test.py" webhooks/serve.log
