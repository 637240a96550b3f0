#!/usr/bin/env bash
# End-to-end: `postern serve` on the embedded defaults (SQLite in a temp dir) with aiosmtpd over
# STARTTLS + AUTH, driven over HTTP, through `postern handle-link` and in headless Chromium
# (Selenium): anonymous → email link wrapped by Safe Links → LoginDescriptor; a second device →
# MIGRATION_REQUIRED → allowMigration; replay refused; password sign-up → confirm; a reset on the
# hosted page after a mail scanner's HEAD and GETs; change of address → recovery; the German page
# (its error included) and the sign-in page; the product's name (--app-name) on every page and in
# the mail. See e2e_test.py.
# POSTERN_BIN picks the binary (default .build/debug/postern); E2E_KEEP=1 keeps the temp dir.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
require_chromium
run_pytest "$root/Tests/integration/e2e_test.py"
