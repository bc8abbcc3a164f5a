"""Secrets never reach a log line."""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import re
import sys
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


def _lines(err: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in err.splitlines() if line.strip()]


def test_secrets_are_redacted_however_json_escapes_them(capsys: pytest.CaptureFixture[str]) -> None:
    """A secret with quotes, backslashes or non-ASCII letters is redacted in values and keys."""
    secret = 'pa"ss\\wörd-0123'
    configure_logging(secrets=[secret], json=True)
    structlog.get_logger("t").info("x", value=f"<{secret}>", **{f"k-{secret}": 1})
    err = capsys.readouterr().err
    (line,) = _lines(err)
    assert secret not in json.dumps(line, ensure_ascii=False) and secret not in err
    assert line["value"] == "<[redacted]>" and "k-[redacted]" in line


def test_lines_orjson_refuses_are_still_written(capsys: pytest.CaptureFixture[str]) -> None:
    """Integers over 64 bits and lone surrogates fall back to the standard JSON encoder."""
    configure_logging(json=True)
    structlog.get_logger("t").info("big", amount=2**70, text="\ud800")
    (line,) = _lines(capsys.readouterr().err)
    assert line["amount"] == 2**70 and line["text"] == "\ud800"


def test_the_timestamp_is_iso_utc_to_the_microsecond(capsys: pytest.CaptureFixture[str]) -> None:
    """Every JSON line carries an ISO 8601 UTC timestamp ending in Z, close to now."""
    configure_logging(json=True)
    before = dt.datetime.now(dt.UTC)
    structlog.get_logger("t").info("tick")
    (line,) = _lines(capsys.readouterr().err)
    stamp = str(line["timestamp"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", stamp)
    parsed = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert abs(parsed - before) < dt.timedelta(seconds=5)
    assert line["level"] == "info" and line["event"] == "tick"


def test_the_console_renderer_redacts_too(capsys: pytest.CaptureFixture[str]) -> None:
    """On a terminal (console rendering) secrets are replaced value by value."""
    token = "webhooktokenABCDEF123456"
    configure_logging(secrets=[token], json=False)
    structlog.get_logger("t").info("request", path=f"/webhook/{token}")
    err = capsys.readouterr().err
    assert token not in err and "[redacted]" in err


def test_lines_go_to_the_stderr_of_the_moment(capsys: pytest.CaptureFixture[str]) -> None:
    """A stream replaced after configuration (tests, daemons) receives the lines."""
    configure_logging(json=True)
    logger = structlog.get_logger("t")
    replaced = io.StringIO()
    saved, sys.stderr = sys.stderr, replaced
    try:
        logger.info("moved")
    finally:
        sys.stderr = saved
    assert _lines(replaced.getvalue())[0]["event"] == "moved"
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("source", ["structlog", "stdlib"])
def test_a_logged_exception_keeps_its_traceback_in_the_json_line(
    capsys: pytest.CaptureFixture[str], source: str
) -> None:
    """An exception logged with exc_info (ours or a library's, like uvicorn's "Exception in
    ASGI application") is written into its JSON line as traceback text, scrubbed of secrets."""
    configure_logging(secrets=["hunter2-secret"], json=True)
    try:
        raise ValueError("bad thing near hunter2-secret")
    except ValueError:
        if source == "structlog":
            structlog.get_logger("t").exception("failed")
        else:
            logging.getLogger("uvicorn.error").exception("Exception in ASGI application")
    (line,) = _lines(capsys.readouterr().err)
    text = str(line["exception"])
    assert text.startswith("Traceback (most recent call last):")
    assert 'raise ValueError("bad thing near [redacted]")' in text
    assert text.endswith("ValueError: bad thing near [redacted]")
    assert "exc_info" not in line
