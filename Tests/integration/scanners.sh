#!/usr/bin/env bash
# Mail scanners (mail_scanner.py: their own cookies, every link followed, every form submitted as
# found, every button pressed) against every kind of hosted page: nothing changes, nothing is
# spent; a person finishes by typing the number the page shows. See scanners_test.py;
# POSTERN_BIN picks the binary.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
run_pytest "$root/Tests/integration/scanners_test.py" scanners/serve.log
