#!/usr/bin/env bash
# docs/configuration.md is the output of `postern settings --markdown`, made from the settings'
# own declarations: this fails when a setting was added, removed or re-worded without the file
# being made again, and says the command that makes it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
postern=${POSTERN_BIN:-$root/.build/debug/postern}
made=$(mktemp)
trap 'rm -f "$made"' EXIT
"$postern" settings --markdown >"$made"
if ! diff -u "$root/docs/configuration.md" "$made"; then
  echo "FAIL: docs/configuration.md differs from the settings' declarations; run:"
  echo "  .build/debug/postern settings --markdown > docs/configuration.md"
  exit 1
fi
rows=$(grep -c '^| `--' "$made")
[ "$rows" -ge 60 ] || { echo "FAIL: only $rows settings in the table"; exit 1; }
echo "configuration doc: ok ($rows settings)"
