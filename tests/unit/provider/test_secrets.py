"""The secret key never reaches a repr, an exception message or a log line."""

from __future__ import annotations

import asyncio
import logging
import traceback

import httpx
import pytest

from provider import errors
from provider.client import AsyncProviderClient, ProviderClient
from tests.unit.provider.support import BASE, SECRET, Script, failed, ok, sync_client

ECHO = {"status": "failed", "message": f"bad key {SECRET}", "errors": {"key": SECRET}}


def _raised(script: Script, call: str = "banks") -> errors.ProviderError:
    client, _ = sync_client(script, max_retries=1)
    with pytest.raises(errors.ProviderError) as caught:
        getattr(client, call)()
    return caught.value


def _all_text(error: BaseException) -> str:
    parts = ["".join(traceback.format_exception(error)), repr(error), str(error)]
    parts += [repr(value) for value in vars(error).values()]
    return "\n".join(parts)


def test_client_repr_hides_the_key() -> None:
    """repr and str of both clients show the base URL only."""
    sync = ProviderClient(BASE, SECRET)
    async_ = AsyncProviderClient(BASE, SECRET)
    for text in (repr(sync), str(sync), repr(async_), str(async_), repr(sync._core)):
        assert SECRET not in text
        assert BASE in text
    sync.close()
    asyncio.run(async_.aclose())


@pytest.mark.parametrize(
    "answer",
    [
        httpx.Response(200, text=f"<html>{SECRET}</html>"),
        httpx.Response(400, json=ECHO),
        httpx.Response(422, json=ECHO),
        httpx.Response(418, json=ECHO),
        httpx.Response(503, json=ECHO),
        httpx.ConnectError(f"cannot connect with {SECRET}"),
        httpx.ReadTimeout(f"timeout {SECRET}"),
    ],
)
def test_errors_never_carry_the_key_even_when_the_answer_echoes_it(
    answer: httpx.Response | Exception,
) -> None:
    """Messages, bodies, `.errors` and tracebacks are scrubbed of the key."""
    error = _raised(Script(answer))
    if isinstance(answer, Exception):
        # The httpx cause is chained for debugging; only our own text is checked.
        error.__cause__ = None
    assert SECRET not in _all_text(error)


def test_scrubbed_body_still_says_where_the_key_was() -> None:
    """The echoed key is replaced by a marker, so the body stays useful."""
    error = _raised(Script(httpx.Response(200, text=f"key={SECRET}")))
    assert isinstance(error, errors.UnexpectedResponseError)
    assert error.body == "key=[redacted]"


def test_logs_never_carry_the_key(caplog: pytest.LogCaptureFixture) -> None:
    """No log line of the client, httpx or httpcore shows the key."""
    for name in (None, "httpx", "httpcore"):
        caplog.set_level(logging.DEBUG, logger=name)
    script = Script(failed("Service unavailable", 503), ok([]))
    client, _ = sync_client(script)
    client.banks()
    events = [record.msg["event"] for record in caplog.records if record.name == "provider.core"]
    assert "provider.retry" in events
    assert SECRET not in repr([record.msg for record in caplog.records])
    assert SECRET not in caplog.text


def test_headers_repr_of_a_sent_request_hides_the_key() -> None:
    """Even the recorded request's headers print masked (httpx masks Authorization)."""
    script = Script(ok([]))
    client, _ = sync_client(script)
    client.banks()
    assert SECRET not in repr(script.requests[0].headers)
    assert SECRET not in repr(script.requests[0])
