"""structlog set-up, once per process: JSON off a TTY, console on one, secrets redacted."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, MutableMapping
from typing import Any

import structlog

REDACTED = "[redacted]"


class Redactor:
    """A structlog processor that replaces every known secret, wherever it appears."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def _scrub(self, value: Any) -> Any:
        if isinstance(value, str):
            for secret in self.secrets:
                if secret in value:
                    value = value.replace(secret, REDACTED)
            return value
        if isinstance(value, dict):
            return {k: self._scrub(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self._scrub(v) for v in value)
        return value

    def __call__(
        self, _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        if not self.secrets:
            return event_dict
        return {key: self._scrub(value) for key, value in event_dict.items()}


def _stderr_logger(*_args: Any) -> structlog.PrintLogger:
    return structlog.PrintLogger(sys.stderr)


def configure_logging(
    *, secrets: Iterable[str] = (), level: int = logging.INFO, json: bool | None = None
) -> None:
    """Configure structlog and stdlib logging for this process."""
    if json is None:
        json = not sys.stderr.isatty()
    redactor = Redactor(secrets)
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        redactor,
    ]
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if json
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        # Resolve sys.stderr per logger so a replaced stream (tests, daemons) is honoured.
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )
    # Library loggers (uvicorn, alembic, apprise) go through the same redaction and format.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        # uvicorn may have installed its own handlers, which would bypass the redaction.
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    for noisy in ("alembic", "httpx", "httpcore", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
