#!/usr/bin/env bash
# The challenge (issue 47 point 3) against solvers no one here wrote: PyPI's altcha (2.3.0)
# solving `GET /v1/challenge`, the real ALTCHA widget (2.3.0, from PyPI's django-altcha) in
# headless Chromium, and a loopback HTTPS siteverify server in Turnstile's shape with a test CA
# (--provider-ca-file): `--challenge always` refuses missing, tampered, malformed, expired and
# reused solutions and queues nothing for them; the bot run over send-link, sign-up, reset and
# phone sign-in (no mail or SMS without a solved challenge, no solution twice); `when-limited`
# past --challenge-ip-per-hour per X-Forwarded-For address, byte for byte alike for every
# address; the CAPTCHA's good, bad, reused token and its service down (503). See
# challenge_test.py; POSTERN_BIN picks the binary.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
require_chromium
run_pytest "$root/Tests/integration/challenge_test.py"
