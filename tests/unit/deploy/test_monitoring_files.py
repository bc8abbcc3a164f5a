"""The monitoring files: alert rules pass promtool and their tests, each rule has a runbook in
docs/operations.md, the dashboard is what its generator writes, compose provisions both."""

from __future__ import annotations

import json
import os
import re
import runpy
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
PROMETHEUS = ROOT / "deploy" / "prometheus"
GRAFANA = ROOT / "deploy" / "grafana"
OPERATIONS = ROOT / "docs" / "operations.md"


@cache
def _rules() -> list[dict[str, Any]]:
    document = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())
    return [rule for group in document["groups"] for rule in group["rules"]]


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        if os.environ.get("PAYRECON_REQUIRE_PROMTOOL") == "1":
            pytest.fail("promtool is required (Debian package prometheus: make system-deps)")
        pytest.skip("promtool not installed (Debian package prometheus: make system-deps)")
    return found


def _run_promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_promtool(), *args], cwd=PROMETHEUS, capture_output=True, text=True, timeout=60
    )


def _github_anchor(heading: str) -> str:
    # GitHub's heading anchors: lower case, punctuation dropped, spaces become hyphens.
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_promtool_checks_the_rules() -> None:
    """`promtool check rules` accepts alerts.yml."""
    result = _run_promtool("check", "rules", "alerts.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(_rules())} rules found" in result.stdout


def test_promtool_rule_tests_pass() -> None:
    """`promtool test rules` passes every case of alerts_test.yml."""
    result = _run_promtool("test", "rules", "alerts_test.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_every_rule_has_a_case_that_fires_and_one_that_does_not() -> None:
    """For each alert, alerts_test.yml expects it firing in one case and silent in another."""
    document = yaml.safe_load((PROMETHEUS / "alerts_test.yml").read_text())
    fires: set[str] = set()
    silent: set[str] = set()
    for case in document["tests"]:
        for check in case["alert_rule_test"]:
            (fires if check["exp_alerts"] else silent).add(check["alertname"])
    names = {rule["alert"] for rule in _rules()}
    assert fires == names
    assert silent == names


def test_every_rule_has_severity_summary_and_a_runbook_section() -> None:
    """Each rule has a severity, a summary and a runbook_url whose anchor is a heading of
    docs/operations.md."""
    anchors = {
        _github_anchor(line.lstrip("#"))
        for line in OPERATIONS.read_text().splitlines()
        if line.startswith("#")
    }
    for rule in _rules():
        assert rule["labels"]["severity"] in {"critical", "warning"}, rule["alert"]
        assert rule["annotations"]["summary"], rule["alert"]
        path, anchor = rule["annotations"]["runbook_url"].split("#")
        assert path == "docs/operations.md"
        assert anchor == f"alert-{rule['alert'].lower()}"
        assert anchor in anchors, f"no section {anchor!r} in docs/operations.md"


def test_github_anchor_follows_githubs_rule() -> None:
    """Headings become anchors as GitHub makes them."""
    assert _github_anchor(" Alert: PayreconNotReady") == "alert-payreconnotready"
    assert _github_anchor("1. Processes, settings and health") == "1-processes-settings-and-health"


def test_dashboard_is_what_its_generator_writes() -> None:
    """deploy/grafana/payrecon.json is valid JSON and up to date with generate.py."""
    generator = runpy.run_path(str(GRAFANA / "generate.py"))
    text = (GRAFANA / "payrecon.json").read_text()
    assert text == generator["render"]()
    dashboard = json.loads(text)
    assert [v["name"] for v in dashboard["templating"]["list"]] == ["datasource"]
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert panels and all(p["datasource"]["uid"] == "${datasource}" for p in panels)
    assert all(t["expr"] for p in panels for t in p["targets"])
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])
    rows = [p["title"] for p in dashboard["panels"] if p["type"] == "row"]
    assert rows[:5] == [
        "Webhooks and outcomes",
        "Ingest latency",
        "Reconciler: passes, lag and due work",
        "Findings open by kind and age",
        "Relay: backlog and outcomes per endpoint",
    ]


def test_compose_monitoring_profile_provisions_rules_and_dashboard() -> None:
    """The monitoring profile's Prometheus loads the rules and scrapes every process; Grafana
    gets the datasource and the dashboard; the workers serve /metrics on the scraped port."""
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    services = compose["services"]
    prometheus, grafana = services["prometheus"], services["grafana"]
    assert prometheus["profiles"] == grafana["profiles"] == ["monitoring"]
    mounts = {v.split(":")[0]: v.split(":")[1] for v in prometheus["volumes"]}
    assert mounts["./prometheus/alerts.yml"] == "/etc/prometheus/alerts.yml"
    config = yaml.safe_load((PROMETHEUS / "prometheus.yml").read_text())
    assert config["rule_files"] == ["/etc/prometheus/alerts.yml"]
    assert mounts["./prometheus/prometheus.yml"] == "/etc/prometheus/prometheus.yml"
    targets = {
        target
        for job in config["scrape_configs"]
        for s in job["static_configs"]
        for target in s["targets"]
    }
    assert targets == {"receiver-1:8000", "receiver-2:8000", "reconciler:9100", "relay:9100"}
    for worker in ("reconciler", "relay"):
        environment = services[worker]["environment"]
        assert environment["PAYRECON_METRICS_PORT"] == "9100"
        assert environment["PAYRECON_METRICS_HOST"] == "0.0.0.0"
    grafana_mounts = {v.split(":")[0]: v.split(":")[1] for v in grafana["volumes"]}
    assert grafana_mounts["./grafana/payrecon.json"] == "/var/lib/grafana/dashboards/payrecon.json"
    provisioning = GRAFANA / "provisioning"
    assert grafana_mounts["./grafana/provisioning"] == "/etc/grafana/provisioning"
    [provider] = yaml.safe_load((provisioning / "dashboards" / "payrecon.yml").read_text())[
        "providers"
    ]
    assert provider["options"]["path"] == "/var/lib/grafana/dashboards"
    [source] = yaml.safe_load((provisioning / "datasources" / "prometheus.yml").read_text())[
        "datasources"
    ]
    assert source["type"] == "prometheus" and source["url"] == "http://prometheus:9090"
    for name in ("prometheus", "grafana"):
        assert all(port.startswith("127.0.0.1:") for port in services[name]["ports"])
