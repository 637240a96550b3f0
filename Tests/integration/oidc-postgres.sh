#!/usr/bin/env bash
# Two `postern serve` on one PostgreSQL database finish an OpenID Connect sign-in one of them began
# (oidc_postgres_test.py): authorize and the address form on A, the mail's link and its button on
# B, the code redeemed on A, userinfo on B, a second authorization on B answered at once from the
# browser's session. A fresh database on the server POSTERN_TEST_POSTGRES names (scripts/test
# starts one), or on a throwaway server this script starts with scripts/postgres and stops at exit.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
source "$(dirname "$0")/postgres_lib.bash"
postgres_for_pytest oidc OIDC_DATABASE
run_pytest "$root/Tests/integration/oidc_postgres_test.py" oidc-a/serve.log
