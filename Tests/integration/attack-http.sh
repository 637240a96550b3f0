#!/usr/bin/env bash
# Attacks on the HTTP layer against a real `postern serve` (see attack_http_test.py): 2,000 slow
# connections from one address, spoofed X-Forwarded-For against the per-IP limit, conflicting
# body framing (request smuggling), JSON sent as text/plain, and /metrics without the token.
# POSTERN_BIN picks the binary (default .build/debug/postern); E2E_KEEP=1 keeps the temp dir.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
run_pytest "$root/Tests/integration/attack_http_test.py" guarded/serve.log
