"""Request ids, loggable paths and the line logger shared by the middleware and the webhook."""

from __future__ import annotations

import structlog

from receiver.fastpath import LineLogger
from receiver.requestlog import loggable_path, request_id_of


def test_a_safe_request_id_is_kept_and_anything_else_replaced() -> None:
    """A short id of safe characters is echoed; a missing or unsafe one becomes 32 hex digits."""
    assert request_id_of("abc-1.2_X") == "abc-1.2_X"
    for unsafe in (None, "", "bad id!", "x" * 65):
        made = request_id_of(unsafe)
        assert made != unsafe and len(made) == 32 and int(made, 16) >= 0
    assert request_id_of(None) != request_id_of(None)


def test_webhook_tokens_are_cut_out_of_logged_paths() -> None:
    """Only the token segment of a webhook path is replaced."""
    assert loggable_path("/webhook/s3cret") == "/webhook/[token]"
    assert loggable_path("/webhook") == "/webhook"
    assert loggable_path("/api/transfers/R1") == "/api/transfers/R1"


def test_the_line_logger_is_reassembled_only_when_the_configuration_changes() -> None:
    """The same assembled logger serves until structlog is configured with other processors."""
    line_logger = LineLogger()
    first = line_logger.get()
    assert line_logger.get() is first
    with structlog.testing.capture_logs() as captured:
        line_logger.get().info("inside")
    assert captured == [{"event": "inside", "log_level": "info"}]
    try:
        structlog.configure(processors=[structlog.processors.KeyValueRenderer()])
        assert line_logger.get() is not first
    finally:
        structlog.reset_defaults()
