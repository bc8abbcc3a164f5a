"""The client's loggers: stdlib `logging` underneath, so a library prints nothing by itself.

Each line is a structlog event (`provider.call`, `provider.retry`, …) handed to the
stdlib logger of the module, the way structlog's stdlib integration does it:

* with no logging configured, nothing is printed (the package's NullHandler keeps even
  warnings away from `logging.lastResort`);
* with `logging.basicConfig(...)`, a line reads `provider.retry endpoint='GET /v1/banks' …`;
* under `structlog.stdlib.ProcessorFormatter` (payrecon's own set-up) the event keeps
  its fields and is rendered like every other line.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

import structlog

# Keys a stdlib formatter shows anyway (level, time), left out of the message text.
_SHOWN_BY_LOGGING = frozenset({"event", "level", "timestamp"})


class _Event(dict[str, Any]):
    """An event dict that prints as `event key=value …` for a plain stdlib formatter."""

    def __str__(self) -> str:
        fields = " ".join(f"{k}={v!r}" for k, v in self.items() if k not in _SHOWN_BY_LOGGING)
        return f"{self.get('event', '')} {fields}".rstrip()


def _to_stdlib(
    logger: Any, method: str, event_dict: MutableMapping[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    args, kwargs = structlog.stdlib.ProcessorFormatter.wrap_for_formatter(
        logger, method, event_dict
    )
    return (_Event(args[0]),), kwargs


def get_logger(name: str) -> Any:
    """A structlog logger bound to the stdlib logger `name` (built lazily, on first use)."""
    return structlog.wrap_logger(
        logging.getLogger(name),
        processors=[
            structlog.stdlib.filter_by_level,  # nothing is built for a level nobody wants
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _to_stdlib,
        ],
        wrapper_class=structlog.stdlib.BoundLogger,
    )
