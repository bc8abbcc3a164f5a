"""Secrets never reach a log line."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import structlog

from payrecon.logconfig import configure_logging


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """Leave logging as it was for the tests that follow."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    structlog.reset_defaults()
    root.handlers[:] = handlers
    root.setLevel(level)


def test_secrets_are_redacted_from_every_log_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Structured and stdlib log lines show [redacted] instead of any configured secret."""
    token = "webhooktokenABCDEF123456"
    key = "sk_test_verysecretkey"
    configure_logging(secrets=[token, key], json=True)
    structlog.get_logger("t").info("request", path=f"/webhook/{token}", nested={"k": [key]})
    logging.getLogger("uvicorn.error").warning("client sent %s", f"Bearer {key}")
    err = capsys.readouterr().err
    assert token not in err and key not in err
    assert err.count("[redacted]") == 3
