#!/usr/bin/env bash
# Links that open the app, against a real `postern serve` (see app_links_test.py): with
# --apple-app-ids and --android-apps the daemon serves /.well-known/apple-app-site-association
# and /.well-known/assetlinks.json in Apple's and Google's documented formats, field by field
# (JSON, 200, no redirect); without them both answer 404 NOT_FOUND; bad values stop the start
# with exit 64 naming the setting. Also --app-name and --support-email on the hosted page.
# POSTERN_BIN picks the binary (default .build/debug/postern); E2E_KEEP=1 keeps the temp dir.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
run_pytest "$root/Tests/integration/app_links_test.py" linked/serve.log
