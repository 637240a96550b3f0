#!/usr/bin/env bash
# The security review's attack sequences over HTTP against a real `postern serve`: lock-then-guess
# of the 6-digit code, pre-hijacking by a send-time session and by a sign-up password, /metrics as
# an oracle, PKCE bypasses, password guessing, 0600 files, and the lows (continueUrl origin and
# parameters, unmailable addresses, high-S ECDSA, concurrent refreshes, reset vs open links).
# See attacks_test.py; POSTERN_BIN picks the binary.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
run_pytest "$root/Tests/integration/attacks_test.py" limits-off/serve.log
