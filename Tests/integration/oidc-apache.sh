#!/usr/bin/env bash
# OpenID Connect with a relying party no one here wrote, in a real browser: Debian's
# libapache2-mod-auth-openidc protects a page on a loopback port (Apache started by the test from
# its own config file, no system service); headless Chromium (Selenium) goes to the page, signs in
# on Postern's hosted page through the mail's link opened in the same browser, consents, and ends
# on the page showing REMOTE_USER = the address. Required: fails at once when apache2, the module,
# Chromium or its driver is missing (scripts/setup --python installs them). See oidc_apache_test.py.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
require_chromium
for need in "${APACHE2:-/usr/sbin/apache2}" /usr/lib/apache2/modules/mod_auth_openidc.so; do
  [ -e "$need" ] || { echo "FAIL: $need is missing (scripts/setup --python installs apache2 and libapache2-mod-auth-openidc)"; exit 1; }
done
run_pytest "$root/Tests/integration/oidc_apache_test.py" oidc-apache/serve.log
