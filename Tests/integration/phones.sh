#!/usr/bin/env bash
# Phone numbers by consent of both parties (issue 17) against a real `postern serve` (see
# phones_test.py): both orders of consent, the move from another account with the mail to its
# owner (release, cool-off, objection), 20 concurrent claims of one number on SQLite and on
# PostgreSQL, deletes by both parties, wrong/replayed/expired codes, the same answers for a free
# and a taken number, and the attacker sequences. SMS go through the file: transport. PostgreSQL
# is the server POSTERN_TEST_POSTGRES names (scripts/test starts one), or a throwaway one started
# here. POSTERN_BIN picks the binary; E2E_KEEP=1 keeps the temp dir.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
source "$(dirname "$0")/postgres_lib.bash"
postgres_for_pytest phones PHONES_PG_DATABASE
run_pytest "$root/Tests/integration/phones_test.py"
