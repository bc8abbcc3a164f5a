"""Tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT): nothing of OpenTelemetry is imported and the
helpers are no-ops."""

from __future__ import annotations

import subprocess
import sys

from ledger.events import trace as event_trace
from telemetry import tracing


def test_helpers_do_nothing_while_tracing_is_off() -> None:
    """span is one shared no-op, no link, no header, no parent."""
    assert not tracing.configure_tracing("x", environ={})
    assert not tracing.enabled()
    assert tracing.span("a") is tracing.span("b")
    assert tracing.links_to(["00-" + "1" * 32 + "-" + "2" * 16 + "-01"]) == []
    headers: dict[str, str] = {}
    tracing.inject(headers)
    assert headers == {}
    assert tracing.extract({"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}) is None
    assert tracing.current_traceparent() is None
    assert tracing.continued("00-" + "1" * 32 + "-" + "2" * 16 + "-01") is None
    assert event_trace.current() is None  # nothing is stored while tracing is off


def test_the_app_and_workers_import_no_opentelemetry_while_off() -> None:
    """Building serve's app and importing the workers loads no opentelemetry module."""
    code = (
        "import sys\n"
        "from payrecon.app import create_app\n"
        "from payrecon.settings import Settings\n"
        "import payrecon.commands.reconcile, payrecon.commands.relay, payrecon.commands.serve\n"
        "create_app(Settings(_env_file=None, database_url='sqlite:///:memory:'))\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
