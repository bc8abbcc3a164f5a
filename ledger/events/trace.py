"""The trace context an event is written in: stored with the event, so that each attempt to
deliver it continues the trace of the change that made it (docs/rules.md: Observability).

The ledger knows nothing of OpenTelemetry: while tracing is on, `telemetry.tracing` installs
a source that answers the current span's W3C `traceparent`; off, there is none and `current`
costs one global lookup. The receiver's group commit writes its events inside its batch span,
so they keep the batch's context (docs/architecture.md, "Tracing the webhook").
"""

from __future__ import annotations

from collections.abc import Callable

_source: Callable[[], str | None] | None = None


def install(source: Callable[[], str | None] | None) -> None:
    """Take `source` as the current trace context's reader (None: tracing is off)."""
    global _source
    _source = source


def current() -> str | None:
    """The current span's `traceparent`, which events written now keep; None while tracing
    is off."""
    source = _source
    if source is None:
        return None
    return source()
