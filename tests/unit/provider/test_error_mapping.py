"""How answers become errors from provider.errors (one boundary, message-driven refusals)."""

from __future__ import annotations

import httpx
import pytest

from provider import errors
from tests.unit.provider.support import INITIATION, TXN, Script, failed, ok, sync_client

CAUSES = [
    ("Insufficient funds", errors.InsufficientFundsError),
    ("Duplicate reference", errors.DuplicateReferenceError),
    ("Invalid bank code", errors.InvalidBankCodeError),
    ("Account not found", errors.AccountNotFoundError),
    ("Webhook not configured", errors.WebhookNotConfiguredError),
]
NOT_ALLOWED = "Access denied. Your IP address is not allowed."
EMPTY = "Access denied. IP whitelisting is enabled but no IP addresses are configured."


def _transfer(script: Script) -> None:
    client, _ = sync_client(script)
    client.initiate_transfer(
        amount=100_000, bank_code="058", account_number="0000000018", reference="m-1"
    )


@pytest.mark.parametrize(("cause", "kind"), CAUSES)
def test_each_transfer_refusal_cause_maps_to_its_error(cause: str, kind: type) -> None:
    """A 400 naming a spec cause raises that cause's TransferRejectedError with `.cause`."""
    with pytest.raises(kind) as caught:
        _transfer(Script(failed(cause)))
    assert isinstance(caught.value, errors.TransferRejectedError)
    assert caught.value.cause == cause
    assert caught.value.status_code == 400


@pytest.mark.parametrize("status", [409, 422, 403])
def test_refusal_cause_maps_whatever_the_4xx_status(status: int) -> None:
    """The cause text decides, not the status code (the spec gives no codes)."""
    with pytest.raises(errors.InsufficientFundsError):
        _transfer(Script(failed("Insufficient funds", status)))


def test_refusal_text_match_ignores_case_and_final_full_stop() -> None:
    """`duplicate reference.` is still the duplicate-reference refusal."""
    with pytest.raises(errors.DuplicateReferenceError):
        _transfer(Script(failed("duplicate reference.")))


def test_known_cause_on_a_5xx_is_unavailable_not_a_refusal() -> None:
    """A 5xx never proves that no money moved, whatever it says."""
    with pytest.raises(errors.ProviderUnavailableError):
        _transfer(Script(failed("Insufficient funds", 500)))


def test_unknown_refusal_text_is_unexpected() -> None:
    """A 400 with a text the spec does not name cannot be interpreted."""
    with pytest.raises(errors.UnexpectedResponseError) as caught:
        _transfer(Script(failed("Something new")))
    assert "Something new" in caught.value.body


def test_401_is_authentication_error() -> None:
    """401 Unauthenticated is AuthenticationError."""
    client, _ = sync_client(Script(failed("Unauthenticated", 401)))
    with pytest.raises(errors.AuthenticationError):
        client.banks()


def test_401_without_a_body_is_still_authentication_error() -> None:
    """The status alone is enough for 401."""
    client, _ = sync_client(Script(httpx.Response(401, text="nope")))
    with pytest.raises(errors.AuthenticationError):
        client.banks()


@pytest.mark.parametrize(
    ("text", "kind"),
    [(NOT_ALLOWED, errors.IPNotAllowedError), (EMPTY, errors.IPWhitelistEmptyError)],
)
def test_whitelist_403_texts_map_to_their_errors(text: str, kind: type) -> None:
    """Both 403 texts of the spec have their own AccessDeniedError, carrying the text."""
    with pytest.raises(kind) as caught:
        _transfer(Script(httpx.Response(403, json={"message": text})))
    assert isinstance(caught.value, errors.AccessDeniedError)
    assert caught.value.message == text


def test_other_403_is_access_denied() -> None:
    """A 403 with another text is the base AccessDeniedError."""
    with pytest.raises(errors.AccessDeniedError) as caught:
        _transfer(Script(httpx.Response(403, json={"message": "Go away"})))
    assert type(caught.value) is errors.AccessDeniedError
    assert caught.value.message == "Go away"


def test_422_carries_the_body_errors() -> None:
    """A 422 is ProviderValidationError with `.errors` from the body."""
    body = {"status": "failed", "message": "Validation failed", "errors": {"type": "bad"}}
    client, _ = sync_client(Script(httpx.Response(422, json=body)))
    with pytest.raises(errors.ProviderValidationError) as caught:
        client.create_virtual_account(type="static", customer={})
    assert caught.value.errors == {"type": "bad"}


def test_422_without_errors_key_keeps_the_whole_body() -> None:
    """The spec does not show a 422 body, so whatever it says is kept."""
    client, _ = sync_client(Script(httpx.Response(422, json={"detail": "x"})))
    with pytest.raises(errors.ProviderValidationError) as caught:
        client.create_virtual_account(type="static", customer={})
    assert caught.value.errors == {"detail": "x"}


def test_failed_enquiry_400_is_enquiry_failed() -> None:
    """`Account name enquiry failed` is EnquiryFailedError."""
    client, _ = sync_client(Script(failed("Account name enquiry failed")))
    with pytest.raises(errors.EnquiryFailedError):
        client.account_enquiry("0000000018", "058")


def test_failed_enquiry_on_a_200_is_still_enquiry_failed() -> None:
    """The spec shows the failed enquiry's body without a status code."""
    client, _ = sync_client(Script(failed("Account name enquiry failed", 200)))
    with pytest.raises(errors.EnquiryFailedError):
        client.account_enquiry("0000000018", "058")


def test_404_is_not_found_and_not_retried() -> None:
    """A 404 lookup is NotFoundError after exactly one request."""
    script = Script(failed("Transaction not found", 404))
    client, sleeps = sync_client(script)
    with pytest.raises(errors.NotFoundError) as caught:
        client.get_transaction("nope")
    assert caught.value.message == "Transaction not found"
    assert len(script.requests) == 1
    assert sleeps == []


@pytest.mark.parametrize(
    "answer",
    [
        httpx.Response(200, text="<html>gateway</html>"),
        httpx.Response(200, json=["not", "an", "object"]),
        httpx.Response(200, json={"data": {}}),
        httpx.Response(200, json={"status": "success"}),
        httpx.Response(200, json={"status": "failed", "message": "???"}),
        httpx.Response(302, headers={"Location": "https://elsewhere.test/"}),
        httpx.Response(418, text="teapot"),
    ],
)
def test_answers_that_are_not_the_envelope_are_unexpected(answer: httpx.Response) -> None:
    """Non-JSON, wrong-shape or unknown answers are UnexpectedResponseError."""
    client, _ = sync_client(Script(answer))
    with pytest.raises(errors.UnexpectedResponseError):
        client.get_transaction("TRF_1")


@pytest.mark.parametrize(
    "change",
    [
        {"status": "done"},
        {"status": None},
        {"amount": "100000"},
        {"amount": 1000.0},
        {"amount": True},
        {"amount": -1},
        {"amount": 2**63},
        {"fee": 2**64},
        {"fee": "25"},
        {"reference": None},
        {"reference": "TRF\x00_1"},
        {"reference": "TRF\ud800"},
        {"merchant_reference": "INV\n1"},
        {"created_at": "yesterday"},
    ],
)
def test_ill_typed_transaction_fields_are_unexpected(change: dict[str, object]) -> None:
    """Known fields are typed strictly: a wrong status or amount is not guessed at."""
    client, _ = sync_client(Script(ok({**TXN, **change})))
    with pytest.raises(errors.UnexpectedResponseError) as caught:
        client.get_transaction("TRF_1")
    assert caught.value.status_code == 200


def test_unstorable_text_in_an_answer_is_kept_storable() -> None:
    """A NUL is dropped and an unpaired surrogate becomes U+FFFD in descriptive text, so the
    status and amounts of the answer still reach the ledger."""
    answer = {**TXN, "status": "failed", "failure_reason": "bad\x00 \ud800 reason", "type": "t\x00"}
    client, _ = sync_client(Script(ok(answer)))
    transaction = client.get_transaction("TRF_1")
    assert transaction.failure_reason == "bad \ufffd reason" and transaction.type == "t"


def test_a_refusal_message_is_kept_storable() -> None:
    """The text of a refusal, which a rejected payout records, loses its NUL too."""
    client, _ = sync_client(Script(failed("odd\x00 refusal", 403)))
    with pytest.raises(errors.AccessDeniedError) as caught:
        client.get_transaction("TRF_1")
    assert caught.value.message == "odd refusal"


@pytest.mark.parametrize("missing", ["reference", "amount", "status"])
def test_missing_essential_transaction_field_is_unexpected(missing: str) -> None:
    """A lookup without reference, amount or status cannot be reconciled."""
    data = {k: v for k, v in TXN.items() if k != missing}
    client, _ = sync_client(Script(ok(data)))
    with pytest.raises(errors.UnexpectedResponseError):
        client.get_transaction("TRF_1")


def test_initiation_with_unknown_status_is_unexpected() -> None:
    """An initiation answer's status must be a transfer status."""
    script = Script(ok({**INITIATION, "status": "queued"}))
    with pytest.raises(errors.UnexpectedResponseError):
        _transfer(script)


def test_banks_data_not_a_list_is_unexpected() -> None:
    """Endpoint 10's data is an array."""
    client, _ = sync_client(Script(ok({"name": "x", "code": "1"})))
    with pytest.raises(errors.UnexpectedResponseError):
        client.banks()


def test_page_without_meta_is_unexpected() -> None:
    """A list page must carry `meta {page, per_page, total}` (PRODUCT.md)."""
    client, _ = sync_client(Script(ok([])))
    with pytest.raises(errors.UnexpectedResponseError):
        client.list_virtual_accounts()


def test_unexpected_body_is_truncated() -> None:
    """`.body` keeps only the start of a huge answer."""
    client, _ = sync_client(Script(httpx.Response(200, text="x" * 10_000)))
    with pytest.raises(errors.UnexpectedResponseError) as caught:
        client.banks()
    assert len(caught.value.body) == errors.BODY_LIMIT


def test_every_error_is_a_provider_error() -> None:
    """Callers can catch ProviderError and miss nothing."""
    leaves = [
        errors.ProviderRequestError("x"),
        errors.IPNotAllowedError("x"),
        errors.IPWhitelistEmptyError("x"),
        errors.ProviderValidationError("x"),
        errors.EnquiryFailedError("x"),
        errors.WebhookNotConfiguredError("x"),
        errors.NotFoundError("x"),
        errors.ProviderTimeoutError("x"),
        errors.RateLimitedError("x", retry_after=None),
        errors.UnexpectedResponseError("x"),
    ]
    assert all(isinstance(leaf, errors.ProviderError) for leaf in leaves)
    assert isinstance(leaves[7], errors.TransientError)
    assert not isinstance(leaves[5], errors.TransientError)
