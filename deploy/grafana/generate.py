"""Write deploy/grafana/payrecon.json, the ops dashboard (PRODUCT.md: Observability).

Run `python deploy/grafana/generate.py` after editing ROWS; tests/unit/deploy/test_dashboard.py
fails when the committed JSON differs from what this writes, and
tests/integration/telemetry/test_exported_names.py when an expression names a metric payrecon
does not export. The datasource is the variable `${datasource}` (any Prometheus).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}

# (row title, [(panel title, unit, [(PromQL, legend)])]); at most four panels a row.
ROWS: list[tuple[str, list[tuple[str, str, list[tuple[str, str]]]]]] = [
    (
        "Webhooks and outcomes",
        [
            (
                "Deliveries by outcome",
                "reqps",
                [
                    (
                        "sum by (outcome) (rate(payrecon_webhook_deliveries_total[5m]))",
                        "{{outcome}}",
                    )
                ],
            ),
            (
                "Refused by sender checks",
                "reqps",
                [
                    (
                        "sum by (reason) (rate(payrecon_webhook_auth_failures_total[5m]))",
                        "{{reason}}",
                    )
                ],
            ),
            ("Ready (/readyz)", "none", [("min(payrecon_ready)", "ready")]),
            ("Ledger answering scrapes", "none", [("min(payrecon_ledger_up)", "ledger up")]),
        ],
    ),
    ("Ingest latency", []),  # filled below
    (
        "Reconciler: passes, lag and due work",
        [
            (
                "Since the last pass",
                "s",
                [("time() - max(payrecon_reconcile_last_pass_timestamp_seconds)", "lag")],
            ),
            (
                "Due now",
                "none",
                [("max by (subject) (payrecon_reconcile_due)", "{{subject}}")],
            ),
            (
                "Passes by outcome",
                "ops",
                [
                    (
                        "sum by (outcome) (rate(payrecon_reconcile_passes_total[15m]))",
                        "{{outcome}}",
                    )
                ],
            ),
            (
                "Pass duration p95",
                "s",
                [
                    (
                        "histogram_quantile(0.95, sum by (le) "
                        "(rate(payrecon_reconcile_pass_seconds_bucket[30m])))",
                        "p95",
                    )
                ],
            ),
        ],
    ),
    (
        "Findings open by kind and age",
        [
            (
                "Open findings",
                "none",
                [("max by (kind) (payrecon_findings_open)", "{{kind}}")],
            ),
            (
                "Oldest open finding",
                "s",
                [("max by (kind) (payrecon_findings_oldest_open_seconds)", "{{kind}}")],
            ),
            (
                "Oldest pending transfer",
                "s",
                [("max(payrecon_transfers_pending_oldest_seconds)", "oldest pending")],
            ),
            (
                "Findings raised",
                "ops",
                [
                    (
                        "sum by (kind) (rate(payrecon_reconcile_findings_raised_total[1h]))",
                        "{{kind}}",
                    )
                ],
            ),
        ],
    ),
    (
        "Relay: backlog and outcomes per endpoint",
        [
            (
                "Pending per endpoint",
                "none",
                [("max by (endpoint) (payrecon_relay_endpoint_pending)", "endpoint {{endpoint}}")],
            ),
            (
                "Oldest pending delivery",
                "s",
                [("max(payrecon_relay_oldest_pending_seconds)", "oldest")],
            ),
            (
                "Attempts per endpoint and outcome",
                "ops",
                [
                    (
                        "sum by (endpoint, outcome) "
                        "(rate(payrecon_relay_worker_attempts_total[5m]))",
                        "{{endpoint}} {{outcome}}",
                    )
                ],
            ),
            (
                "Disabled endpoints",
                "none",
                [("max by (endpoint) (payrecon_relay_endpoint_disabled)", "endpoint {{endpoint}}")],
            ),
        ],
    ),
    (
        "Statements",
        [
            (
                "Unmatched statement lines",
                "none",
                [("max by (account) (payrecon_statement_unmatched_lines)", "{{account}}")],
            ),
            (
                "Since the latest statement line",
                "s",
                [
                    (
                        "time() - max by (account) "
                        "(payrecon_statement_last_line_timestamp_seconds)",
                        "{{account}}",
                    )
                ],
            ),
            (
                "Statement findings open",
                "none",
                [
                    (
                        "max by (kind) (payrecon_findings_open{kind=~"
                        '"unmatched_statement_line|missing_from_statement|statement_mismatch|'
                        'statement_balance_gap|closed_period_changed"})',
                        "{{kind}}",
                    )
                ],
            ),
        ],
    ),
]

# The ingest row's panels (kept apart: their queries are long).
ROWS[1] = (
    "Ingest latency",
    [
        (
            "Webhook answer time",
            "s",
            [
                (
                    f"histogram_quantile({q}, sum by (le) "
                    "(rate(payrecon_webhook_ingest_seconds_bucket[5m])))",
                    f"p{round(q * 100)}",
                )
                for q in (0.5, 0.95, 0.99)
            ],
        ),
        (
            "Group commit duration p99",
            "s",
            [
                (
                    "histogram_quantile(0.99, sum by (le) "
                    "(rate(payrecon_ingest_batch_seconds_bucket[5m])))",
                    "p99",
                )
            ],
        ),
        (
            "Deliveries per commit",
            "none",
            [
                (
                    "sum(rate(payrecon_ingest_batch_size_sum[5m])) / "
                    "sum(rate(payrecon_ingest_batch_size_count[5m]))",
                    "mean batch",
                )
            ],
        ),
    ],
)


def dashboard() -> dict[str, Any]:
    """The dashboard as Grafana's JSON model."""
    panels: list[dict[str, Any]] = []
    y = 0
    for row_title, row_panels in ROWS:
        panels.append(
            {
                "id": len(panels) + 1,
                "type": "row",
                "title": row_title,
                "collapsed": False,
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
                "panels": [],
            }
        )
        y += 1
        width = 24 // max(1, len(row_panels))
        for index, (title, unit, queries) in enumerate(row_panels):
            panels.append(
                {
                    "id": len(panels) + 1,
                    "type": "timeseries",
                    "title": title,
                    "datasource": DATASOURCE,
                    "gridPos": {"h": 8, "w": width, "x": index * width, "y": y},
                    "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                    "targets": [
                        {
                            "refId": chr(ord("A") + n),
                            "datasource": DATASOURCE,
                            "expr": expr,
                            "legendFormat": legend,
                        }
                        for n, (expr, legend) in enumerate(queries)
                    ],
                }
            )
        y += 8
    return {
        "uid": "payrecon-ops",
        "title": "payrecon",
        "tags": ["payrecon"],
        "timezone": "browser",
        "schemaVersion": 39,
        "version": 1,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "label": "Prometheus",
                    "type": "datasource",
                    "query": "prometheus",
                    "current": {},
                    "hide": 0,
                }
            ]
        },
        "panels": panels,
    }


def render() -> str:
    """The file's text."""
    return json.dumps(dashboard(), indent=2) + "\n"


if __name__ == "__main__":
    target = HERE / "payrecon.json"
    target.write_text(render())
    sys.stdout.write(f"wrote {target}\n")
