"""Answers not in the provider's format are ForeignAnswerError, never "not found"."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from provider import errors
from provider.answers import is_envelope
from provider.client import ProviderClient
from tests.unit.provider.support import SECRET, TXN, Script, async_client, failed, ok, sync_client

HTML = "<!doctype html><html><body><h1>404 Not Found</h1></body></html>"


@pytest.mark.parametrize(
    "answer",
    [
        httpx.Response(404, text=HTML, headers={"content-type": "text/html; charset=utf-8"}),
        httpx.Response(404, text="Not Found", headers={"content-type": "text/plain"}),
        httpx.Response(404, json={"detail": "Not Found"}),
        httpx.Response(404, json={"message": "Not Found"}),
        httpx.Response(404, json={"status": "error", "message": "Transaction not found"}),
        httpx.Response(302, headers={"Location": "https://login.example.test/"}),
        httpx.Response(301, headers={"Location": "/v2/transaction/TRF_1"}),
        httpx.Response(405, text="Method Not Allowed"),
        httpx.Response(400, text=HTML, headers={"content-type": "text/html"}),
        httpx.Response(403, text=HTML, headers={"content-type": "text/html"}),
        httpx.Response(200, text=HTML, headers={"content-type": "text/html"}),
        httpx.Response(200, json={"data": TXN}),
        httpx.Response(200, json=[TXN]),
    ],
)
def test_answers_in_another_format_are_foreign_not_not_found(answer: httpx.Response) -> None:
    """HTML pages, redirects and 404s without the envelope raise ForeignAnswerError."""
    script = Script(answer)
    client, sleeps = sync_client(script)
    with pytest.raises(errors.ForeignAnswerError) as caught:
        client.get_transaction("TRF_1")
    assert not isinstance(caught.value, errors.NotFoundError)
    assert caught.value.status_code == answer.status_code
    assert caught.value.url == "GET https://provider.test/v1/transaction/TRF_1"
    assert caught.value.message.startswith(f"{caught.value.url} answered {answer.status_code} ")
    assert len(script.requests) == 1 and sleeps == []  # never followed, never retried


def test_the_providers_own_not_found_is_still_not_found() -> None:
    """The spec's 404 `{"status": "failed", "message": …}` is still NotFoundError."""
    client, _ = sync_client(Script(failed("Transaction not found", 404)))
    with pytest.raises(errors.NotFoundError) as caught:
        client.get_transaction("TRF_1")
    assert not isinstance(caught.value, errors.UnexpectedResponseError)


def test_a_redirect_names_where_it_points() -> None:
    """The message of a redirect says where it went, so the operator sees the wrong URL."""
    client, _ = sync_client(Script(httpx.Response(302, headers={"Location": "https://sso.test/"})))
    with pytest.raises(errors.ForeignAnswerError) as caught:
        client.banks()
    assert "redirect to 'https://sso.test/'" in caught.value.message


def test_the_url_shown_has_no_credentials_query_or_key() -> None:
    """Credentials in the base URL, the query string and the secret key never reach the error."""
    script = Script(httpx.Response(404, text=f"no such page; you sent {SECRET}"))
    transport = httpx.MockTransport(script)
    with (
        ProviderClient(
            "https://user:pa55word@provider.test/base", SECRET, transport=transport
        ) as c,
        pytest.raises(errors.ForeignAnswerError) as caught,
    ):
        c.account_enquiry("0000000018", "058")
    error = caught.value
    assert error.url == "GET https://provider.test/base/v1/account-enquiry"
    for text in (error.message, error.body, error.url, str(error)):
        assert "pa55word" not in text and SECRET not in text and "0000000018" not in text


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (httpx.Response(401, text=HTML), errors.AuthenticationError),
        (httpx.Response(429, text=HTML), errors.RateLimitedError),
        (httpx.Response(502, text=HTML), errors.ProviderUnavailableError),
        (httpx.Response(403, json={"message": "Go away"}), errors.AccessDeniedError),
        (failed("Something new", 400), errors.UnexpectedResponseError),
    ],
)
def test_answers_whose_meaning_is_in_the_status_or_envelope_are_not_foreign(
    answer: httpx.Response, kind: type
) -> None:
    """A 401, 429 or 5xx means what its status says; an enveloped refusal is the provider's."""
    client, _ = sync_client(Script(answer), max_retries=0)
    with pytest.raises(kind) as caught:
        client.get_transaction("TRF_1")
    assert not isinstance(caught.value, errors.ForeignAnswerError)


def test_the_async_client_reads_foreign_answers_the_same_way() -> None:
    """AsyncProviderClient raises ForeignAnswerError for a 404 page too."""
    client, _ = async_client(Script(httpx.Response(404, text=HTML)))

    async def look() -> None:
        async with client:
            await client.get_transaction("TRF_1")

    with pytest.raises(errors.ForeignAnswerError):
        asyncio.run(look())


@pytest.mark.parametrize(
    ("payload", "status", "expected"),
    [
        ({"status": "success", "data": {}}, 200, True),
        ({"status": "failed", "message": "Transaction not found"}, 404, True),
        ({"message": "Access denied. Your IP address is not allowed."}, 403, True),
        ({"message": "Transaction not found"}, 404, False),
        ({"status": "failed"}, 404, False),
        ({"status": "success", "data": {}}, 404, False),
        ({"detail": "Not Found"}, 404, False),
        ("<html>", 404, False),
        (None, 200, False),
        (["status"], 200, False),
    ],
)
def test_is_envelope(payload: object, status: int, expected: bool) -> None:
    """Only the spec's envelope (message-only for the 403) counts as the provider's format."""
    assert is_envelope(payload, status) is expected


def test_a_success_envelope_still_parses() -> None:
    """The classification leaves a good answer alone."""
    client, _ = sync_client(Script(ok(TXN)))
    assert client.get_transaction("TRF_1").reference == "TRF_1"
