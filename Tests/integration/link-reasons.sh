#!/usr/bin/env bash
# Why a link failed (issue 15 point 4) against a real `postern serve` (see link_reasons_test.py):
# the API's LINK_USED (with signedInHere for the browser or device that completed it),
# EXPIRED_OOB_CODE, LINK_SUPERSEDED and LINK_OTHER_BROWSER (bindBrowser's cookie), each reason's
# sentence on the hosted page in headless Chromium — "already signed in" on the second click in
# the asking browser, the other-browser sentence in a second browser profile — tampered codes
# answered generically, address A's answers independent of address B, used and superseded
# answered in the same time, and postern_link_failures_total. Takes about a minute (a 60 s link
# is waited out). POSTERN_BIN picks the binary; E2E_KEEP=1 keeps the temp dir.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
require_chromium
run_pytest "$root/Tests/integration/link_reasons_test.py" links/serve.log
