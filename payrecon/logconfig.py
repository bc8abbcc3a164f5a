"""structlog set-up, once per process: JSON off a TTY, console on one, secrets redacted."""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable, MutableMapping
from typing import Any

import orjson
import structlog

REDACTED = "[redacted]"
# What a token must not touch to count as a value of its own (so `alerts_sent` is one word).
_WORD = "[A-Za-z0-9_]"


class Redactor:
    """A structlog processor that replaces every known secret, wherever it appears, and every
    token (an alert URL's path token) where it stands as a value of its own."""

    def __init__(self, secrets: Iterable[str], tokens: Iterable[str] = ()) -> None:
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        self.tokens = sorted({t for t in tokens if t}, key=len, reverse=True)
        # A token is a whole word: never replaced inside a longer one (`alerts` in
        # `alerts_sent`), which would rewrite ordinary log text.
        self._tokens = (
            re.compile(
                r"(?<![A-Za-z0-9_])(?:"
                + "|".join(map(re.escape, self.tokens))
                + r")(?![A-Za-z0-9_])"
            )
            if self.tokens
            else None
        )
        # How a secret reads inside a JSON line: escaped, with non-ASCII kept (orjson) or
        # written as \u escapes (json.dumps).
        escaped = {
            json.dumps(secret, ensure_ascii=as_ascii)[1:-1]
            for secret in self.secrets
            for as_ascii in (True, False)
        }
        self.rendered = sorted(escaped, key=len, reverse=True)

    def _scrub(self, value: Any) -> Any:
        if isinstance(value, str):
            for secret in self.secrets:
                if secret in value:
                    value = value.replace(secret, REDACTED)
            return self._scrub_tokens(value)
        if isinstance(value, dict):
            return {k: self._scrub(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self._scrub(v) for v in value)
        return value

    def scrub(self, text: str) -> str:
        """`text` with every secret replaced (error messages printed outside logging)."""
        return str(self._scrub(text))

    def __call__(
        self, _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        if not self.secrets and not self.tokens:
            return event_dict
        return {key: self._scrub(value) for key, value in event_dict.items()}

    def scrub_line(self, _logger: Any, _method: str, line: str) -> str:
        """The same, as the last processor after a JSON renderer: one scan of the finished line
        costs less than walking every value, and also covers keys."""
        for secret in self.rendered:
            if secret in line:
                line = line.replace(secret, REDACTED)
        return self._scrub_tokens(line)

    def _scrub_tokens(self, text: str) -> str:
        return text if self._tokens is None else self._tokens.sub(REDACTED, text)


def _json_dumps(value: Any, **kwargs: Any) -> str:
    """orjson where it can (several times faster than json.dumps), json.dumps where it cannot."""
    try:
        return orjson.dumps(value, default=kwargs.get("default")).decode()
    except TypeError:
        # orjson refuses integers over 64 bits, lone surrogates and non-string keys.
        return json.dumps(value, **kwargs)


# Microseconds always, `Z` for UTC: `fmt="iso"` would drop the fraction on a whole second.
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def _stderr_logger(*_args: Any) -> structlog.WriteLogger:
    # Whatever `sys.stderr` is when a logger is assembled (once per line for the lazy
    # loggers), so a replaced stream (tests, daemons) is honoured. WriteLogger writes each
    # line in one call under a lock, so lines from two threads do not interleave.
    return structlog.WriteLogger(sys.stderr)


def configure_logging(
    *,
    secrets: Iterable[str] = (),
    tokens: Iterable[str] = (),
    level: int = logging.INFO,
    json: bool | None = None,
) -> None:
    """Configure structlog and stdlib logging for this process (Redactor: `secrets` hidden
    wherever they appear, `tokens` as whole words)."""
    if json is None:
        json = not sys.stderr.isatty()
    redactor = Redactor(secrets, tokens)
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt=TIMESTAMP_FORMAT, utc=True),
        # The traceback as text in the line, for stdlib records (uvicorn's "Exception in ASGI
        # application") as for our own; left alone, the renderer would print the repr of a
        # traceback object. Before the console's redactor, so the text is scrubbed too.
        structlog.processors.format_exc_info,
    ]
    # Secrets are scrubbed from the rendered line in JSON, from each value on the console
    # (which shows values through repr, so its text is not predictable).
    if json:
        before: list[Any] = []
        after: list[Any] = [
            structlog.processors.JSONRenderer(serializer=_json_dumps),
            redactor.scrub_line,
        ]
    else:
        before = [redactor]
        after = [structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())]
    structlog.configure(
        processors=[*shared, *before, *after],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )
    # Library loggers (uvicorn, alembic, apprise) go through the same redaction and format.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, *before],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *after],
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
