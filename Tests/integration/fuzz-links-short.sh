#!/usr/bin/env bash
# Short libFuzzer run of the pasted-link parser, for the test suite (.ci/run calls it).
#
# Builds bench/out/fuzz-links (swiftc -sanitize=fuzzer,address over Sources/PosternCore/Links)
# and fuzzes it for FUZZ_LINKS_SECONDS (default 20). Exits non-zero when the build fails or
# libFuzzer reports a crash, an ASan error, a leak or an input slower than 1 s; the crashing input
# is left in bench/out/fuzz-links-crash-* (or -timeout-*, -leak-*).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
exec "$root/bench/fuzz-links" "${FUZZ_LINKS_SECONDS:-20}"
