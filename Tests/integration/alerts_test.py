"""The operators' files (issue 15 point 6): ops/prometheus/postern-alerts.yml passes
`promtool check rules` and its unit tests (`promtool test rules`, the series that must raise each
alert), and every Postern metric it and the Grafana dashboard (ops/grafana/postern-dashboard.json)
name is one a real `postern serve` serves on /metrics. Run by alerts.sh.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.request

import pytest

from postern_daemon import ROOT, Daemon

RULES = os.path.join(ROOT, "ops", "prometheus", "postern-alerts.yml")
RULE_TESTS = os.path.join(ROOT, "ops", "prometheus", "postern-alerts.test.yml")
DASHBOARD = os.path.join(ROOT, "ops", "grafana", "postern-dashboard.json")
PROMTOOL = shutil.which("promtool")


@pytest.fixture(scope="module")
def served_metrics():
    work = os.environ.get("E2E_WORK") or tempfile.mkdtemp(prefix="postern-alerts-")
    daemon = Daemon(work, "alerts")
    try:
        daemon.post("/v1/accounts/anonymous")
        with urllib.request.urlopen(f"http://127.0.0.1:{daemon.metrics_port}/metrics", timeout=10) as answer:
            text = answer.read().decode()
    finally:
        assert daemon.stop() == 0
    names = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            names.add(name)
            if kind == "histogram":
                names.update({name + "_bucket", name + "_sum", name + "_count"})
        elif line and not line.startswith("#"):
            names.add(re.split(r"[{ ]", line, maxsplit=1)[0])
    return names


def postern_names(text):
    return set(re.findall(r"\bpostern_[a-z_]+\b", text))


def test_promtool_checks_the_rules_and_their_unit_tests():
    assert PROMTOOL, "promtool is missing (Debian package prometheus: scripts/setup installs it)"
    checked = subprocess.run([PROMTOOL, "check", "rules", RULES], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS" in checked.stdout
    tested = subprocess.run([PROMTOOL, "test", "rules", RULE_TESTS], capture_output=True, text=True, cwd=os.path.dirname(RULES))
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_every_metric_the_rules_and_the_dashboard_name_is_served(served_metrics):
    rules = postern_names(open(RULES).read())
    assert {"postern_outbox_messages", "postern_webhook_attempts_total", "postern_webhook_deliveries"} <= rules
    assert rules <= served_metrics, rules - served_metrics
    dashboard = json.load(open(DASHBOARD))
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    assert len(expressions) >= 8
    used = set().union(*(postern_names(e) for e in expressions))
    assert used <= served_metrics, used - served_metrics
    # Every panel has a title and a Prometheus datasource variable, so the file imports anywhere.
    assert all(panel["title"] for panel in dashboard["panels"])
    assert any(v["type"] == "datasource" for v in dashboard["templating"]["list"])
