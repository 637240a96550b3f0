#!/usr/bin/env bash
# The operators' alert rules and dashboard (see alerts_test.py): `promtool check rules` and
# `promtool test rules` pass on ops/prometheus/postern-alerts.yml, and every Postern metric the
# rules and ops/grafana/postern-dashboard.json name is served by a real daemon's /metrics.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
run_pytest "$root/Tests/integration/alerts_test.py" alerts/serve.log
