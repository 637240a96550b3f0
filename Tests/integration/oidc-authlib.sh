#!/usr/bin/env bash
# OpenID Connect with a relying party no one here wrote: PyPI's authlib (OAuth2Session, its
# CodeIDToken over joserfc) as confidential web clients (ES256 and RS256) and a public native client against
# `postern serve` (SQLite in a temp dir, mail as .eml files): discovery, code + PKCE S256 with
# state and nonce, the ID token checked against the JWKS, iss in the response, userinfo, refresh
# with rotation, revocation, logout; a replayed code, another client's code, a wrong verifier, the
# link opened in another browser. See oidc_authlib_test.py; POSTERN_BIN picks the binary.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
run_pytest "$root/Tests/integration/oidc_authlib_test.py" oidc-authlib/serve.log
