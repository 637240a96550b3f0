#!/usr/bin/env bash
# Sign in with Apple, Google and any OpenID provider (issue 46) against an OpenID provider no one
# here wrote: test_idp.py (PyPI's authlib server side, RS256 keys, loopback HTTPS with a test CA)
# and `postern serve` with --identity-providers (google and apple pointed at it, a generic acme
# found by discovery) and --provider-ca-file: the five cases and migration over
# POST /v1/provider/sign-in, every bad token refused with nothing created, keys cached, the
# pre-hijacking sequence, a Firebase export's google.com user, the demo app's Apple story, and the
# web flow in headless Chromium back to an authlib relying party. See providers_test.py;
# POSTERN_BIN and POSTERN_DEMO_BIN pick the binaries.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
require_chromium
export POSTERN_DEMO_BIN="${POSTERN_DEMO_BIN:-$root/.build/debug/postern-demo}"
run_pytest "$root/Tests/integration/providers_test.py" providers/serve.log
