#!/usr/bin/env bash
# The challenge on the hosted sign-in page in a real browser (issue 47): `postern serve --challenge
# always`, an authlib client, headless Chromium (Selenium) typing the address while Postern's
# script solves the proof of work (WebCrypto) and sends the form; the mail's link completes the
# sign-in. A form without a solution or with a used one: the page again, no mail. With --captcha
# turnstile: the widget's element and script and a CSP naming the service (no network). Required:
# fails at once without Chromium or its driver. See oidc_challenge_test.py.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
require_chromium
run_pytest "$root/Tests/integration/oidc_challenge_test.py" oidc-challenge/serve.log
