#!/usr/bin/env bash
# The hooks that decide (--hook-before-sign-up, --hook-before-sign-in, --hook-token-claims) against
# a real `postern serve` (see hooks_test.py): a Python hook server verifies every call with the
# `standardwebhooks` PyPI library and answers allow, deny or claims; the claims reach PyPI's authlib
# as a relying party in the ID token it validates; a deny's HTML is escaped on the hosted page; a
# hook that hangs fails closed within --hook-timeout; a reserved claim is refused. POSTERN_BIN picks
# the binary (default .build/debug/postern); E2E_KEEP=1 keeps the temp dir.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
run_pytest "$root/Tests/integration/hooks_test.py" hooks/serve.log
