"""The Grafana dashboard and the Prometheus alerts of docs/operators/: every metric they read
is one the server serves (an operator-mode server, whose metrics are the most), each alert
is a well-formed rule, and the dashboard is a Grafana dashboard by Grafana's own schema (its
types, @grafana/schema from npm, checked by the TypeScript compiler)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")
pytest.importorskip("yaml")

import yaml
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from pontoon.server.metrics import ServerMetrics
from tests.test_operator_wallet import _app
from tests.test_server_helpers import serving

pytestmark = pytest.mark.integration  # an operator-mode server in this process

DOCS = Path(__file__).resolve().parent.parent / "docs" / "operators"
DASHBOARD = DOCS / "grafana-dashboard.json"
ALERTS = DOCS / "alerts.yml"
GRAFANA_SCHEMA = "@grafana/schema@13.2.3"  # its types: the dashboard as Grafana reads it
TYPESCRIPT = "typescript@5.9.3"
SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "summary": ("", "_count", "_sum", "_created"),
}


def _expressions(node: Any) -> list[str]:
    """Every ``expr`` in a dashboard's panels (its queries), at any depth."""
    if isinstance(node, dict):
        own = [node["expr"]] if isinstance(node.get("expr"), str) else []
        return own + [e for v in node.values() for e in _expressions(v)]
    if isinstance(node, list):
        return [e for v in node for e in _expressions(v)]
    return []


def _served(tmp_path: Path) -> set[str]:
    """The names of the samples an operator-mode server's metrics hold (each family's, by
    its type: a counter's ``_total``, a histogram's ``_bucket``, ...), with or without
    samples yet."""
    app = _app(tmp_path / "m.db", "http://127.0.0.1:9")  # (no call made: the families only)
    with serving(app) as client:
        registry = CollectorRegistry()
        registry.register(ServerMetrics(client.app.state))  # type: ignore[attr-defined]
        text = generate_latest(registry).decode()
    return {
        family.name + suffix
        for family in text_string_to_metric_families(text)
        for suffix in SUFFIXES[family.type]
    }


def test_the_dashboard_and_the_alerts_read_only_metrics_the_server_serves(
    tmp_path: Path,
) -> None:
    served = _served(tmp_path)
    assert {"pontoon_operator_calls_total", "pontoon_message_seconds_bucket"} <= served
    queries = _expressions(json.loads(DASHBOARD.read_text("utf-8")))
    rules = [r for g in yaml.safe_load(ALERTS.read_text("utf-8"))["groups"] for r in g["rules"]]
    assert len(queries) >= 10 and len(rules) >= 9
    for rule in rules:
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule
        assert re.fullmatch(r"Pontoon\w+", rule["alert"]) and rule["annotations"]["summary"]
        assert rule.get("for") is None or re.fullmatch(r"\d+[smh]", rule["for"]), rule
    for expr in [*queries, *(r["expr"] for r in rules)]:
        for name in re.findall(r"pontoon_\w+", expr):
            assert name in served, f"{name} (in {expr!r}) is not a metric the server serves"


def test_the_dashboard_is_a_grafana_dashboard_by_grafanas_own_types(tmp_path: Path) -> None:
    """The dashboard, written as a TypeScript object of Grafana's ``Dashboard`` type, compiles:
    a key Grafana does not know, or a value of the wrong type, is an error (a panel's
    ``gridPos`` misspelt fails here)."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("no npm here")
    installed = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--silent", GRAFANA_SCHEMA, TYPESCRIPT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if installed.returncode != 0:  # (the registry not reachable: not this code's fault)
        pytest.skip(f"npm could not install the checker: {installed.stderr.strip()[-200:]}")
    dashboard = json.loads(DASHBOARD.read_text("utf-8"))

    def compiles(board: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        source = "import type { Dashboard } from '@grafana/schema';\n"
        source += f"export const dashboard: Dashboard = {json.dumps(board, indent=1)};\n"
        (tmp_path / "dashboard.ts").write_text(source, "utf-8")
        tsc = [str(tmp_path / "node_modules" / ".bin" / "tsc"), "--noEmit", "--strict"]
        tsc += ["--module", "esnext", "--moduleResolution", "bundler", "--skipLibCheck"]
        return subprocess.run(
            [*tsc, "dashboard.ts"], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )

    done = compiles(dashboard)
    assert done.returncode == 0, done.stdout + done.stderr
    misspelt = json.loads(json.dumps(dashboard).replace('"gridPos"', '"gridPosition"', 1))
    wrong = compiles(misspelt)
    assert wrong.returncode != 0 and "gridPosition" in wrong.stdout, wrong.stdout
