#!/usr/bin/env bash
# The README's pictures (docs/images/sign-in-mail.png, sign-in-page.png): the sign-in mail's HTML
# part and the hosted page; and the OpenID Connect sign-in page and its "check your mail" page
# (oidc-sign-in.png, oidc-check-mail.png, README.md and docs/oidc.md): rendered in headless
# Chromium from a real daemon. Fails only when they cannot be rendered or lack what they must
# show; UPDATE_DOC_IMAGES=1 writes them into docs/images/. See doc_images_test.py.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
require_chromium
run_pytest "$root/Tests/integration/doc_images_test.py" daemon/serve.log
