#!/usr/bin/env bash
# SMS delivery against a real `postern serve` (see sms_test.py): a fake Twilio on loopback HTTPS
# (its CA trusted through --sms-ca-file) checks Basic auth and the form fields; 503 then 201 →
# one SMS sent; 400 with Twilio's 21211 → dead with the code kept; without the CA nothing is
# sent; the generic JSON provider's signature verifies with `standardwebhooks`.
# POSTERN_BIN picks the binary (default .build/debug/postern); E2E_KEEP=1 keeps the temp dir.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
run_pytest "$root/Tests/integration/sms_test.py" sms/daemon/serve.log
