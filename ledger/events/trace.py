"""The trace context an event is written in: stored with the event, so that each attempt to
deliver it continues the trace of the change that made it (docs/rules.md: Observability).

The ledger knows nothing of OpenTelemetry: while tracing is on, `telemetry.tracing` installs
a source that answers the current span's W3C `traceparent`; off, there is none and `current`
costs one global lookup. A writer that works for many requests at once (the receiver's group
commit) names the request an event belongs to with `continuing`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

_source: Callable[[], str | None] | None = None
_continued: ContextVar[str | None] = ContextVar("payrecon_traceparent", default=None)


def install(source: Callable[[], str | None] | None) -> None:
    """Take `source` as the current trace context's reader (None: tracing is off)."""
    global _source
    _source = source


def current() -> str | None:
    """The `traceparent` events written now keep: the one `continuing` names, else the
    current span's; None while tracing is off."""
    source = _source
    if source is None:
        return None
    return _continued.get() or source()


@contextlib.contextmanager
def continuing(traceparent: str | None) -> Iterator[None]:
    """Events written inside the block keep `traceparent` (None: the current span's)."""
    if traceparent is None:
        yield
        return
    token = _continued.set(traceparent)
    try:
        yield
    finally:
        _continued.reset(token)
