#!/usr/bin/env bash
# `postern users import` / `export` against generated Firebase and Supabase exports and a real
# `postern serve` (import_test.py): needs firebase-scrypt and bcrypt (Tests/requirements.txt).
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
run_pytest "$root/Tests/integration/import_test.py" serve/serve.log
