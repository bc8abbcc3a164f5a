"""Parsing webhook bodies: a pure function that only ever raises the validation errors."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.types import EventType, TransferStatus
from receiver.errors import BodyNotJSONError, InvalidEventError
from receiver.events import IgnoredEvent, TransferEvent, canonical_json, parse_event


def _success(**data: Any) -> bytes:
    base = {
        "reference": "TRF_1",
        "merchant_reference": "m-1",
        "amount": 150_000,
        "status": "successful",
        "fee": 2500,
    }
    base.update(data)
    return json.dumps({"event": "transfer.success", "data": base}).encode()


def test_a_success_event_is_parsed_with_its_figures() -> None:
    """transfer.success yields the provider reference, merchant reference, amount and fee."""
    event = parse_event(_success())
    assert isinstance(event, TransferEvent)
    assert event.event is EventType.TRANSFER_SUCCESS
    assert (event.reference, event.merchant_reference) == ("TRF_1", "m-1")
    assert (event.amount, event.fee, event.status) == (150_000, 2500, TransferStatus.SUCCESSFUL)


def test_a_failed_event_carries_its_reason_and_no_amount() -> None:
    """transfer.failed needs no amount or fee and keeps the failure reason."""
    body = {
        "event": "transfer.failed",
        "data": {
            "reference": "TRF_2",
            "merchant_reference": "m-2",
            "status": "failed",
            "failure_reason": "Dormant",
        },
    }
    event = parse_event(json.dumps(body).encode())
    assert isinstance(event, TransferEvent)
    assert (event.status, event.failure_reason, event.amount) == (
        TransferStatus.FAILED,
        "Dormant",
        None,
    )


@pytest.mark.parametrize(
    ("reason", "kept"),
    [
        ("Account\nclosed", "Account\nclosed"),
        ("bank\x00 offline", "bank offline"),
        ("half \ud800 pair", "half \ufffd pair"),
    ],
)
def test_a_failure_reason_is_kept_and_made_storable(reason: str, kept: str) -> None:
    """The failure reason is descriptive: line breaks stay, NUL goes, a lone surrogate becomes
    U+FFFD, and the event is accepted rather than refused over it."""
    body = {
        "event": "transfer.failed",
        "data": {"reference": "TRF_3", "status": "failed", "failure_reason": reason},
    }
    event = parse_event(json.dumps(body).encode())
    assert isinstance(event, TransferEvent) and event.failure_reason == kept


def test_a_failure_reason_that_is_not_text_is_refused() -> None:
    """A number or an overlong text as failure reason is still a 422 naming the field."""
    for reason in (42, "x" * 2001):
        body = {
            "event": "transfer.failed",
            "data": {"reference": "TRF_4", "status": "failed", "failure_reason": reason},
        }
        with pytest.raises(InvalidEventError) as caught:
            parse_event(json.dumps(body).encode())
        assert caught.value.field == "data.failure_reason"


def test_equal_json_gives_equal_hash_whatever_the_key_order() -> None:
    """Same content means equal as JSON: key order and whitespace do not matter."""
    one = parse_event(_success())
    other = parse_event(
        b'{ "data": {"fee":2500, "status":"successful","amount":150000,'
        b'"merchant_reference":"m-1","reference":"TRF_1"},  "event":"transfer.success"}'
    )
    assert one.content_hash == other.content_hash


def test_an_unknown_event_type_is_ignored_not_refused() -> None:
    """A well-formed event of a type we do not handle is an IgnoredEvent."""
    event = parse_event(b'{"event": "collection.success", "data": {"reference": "C1"}}')
    assert isinstance(event, IgnoredEvent)
    assert (event.event, event.reference) == ("collection.success", "C1")


@pytest.mark.parametrize(
    "reference", ["\\ud800", "nul\\u0000here", "tab\\there", "x" * 101], ids=repr
)
def test_an_ignored_event_keeps_no_reference_that_could_not_be_stored(reference: str) -> None:
    """An unknown event whose reference has control characters, a lone surrogate or is too long
    is still ignored (not refused), with no reference label."""
    raw = b'{"event": "collection.success", "data": {"reference": "%s"}}' % reference.encode()
    event = parse_event(raw)
    assert isinstance(event, IgnoredEvent)
    assert event.reference is None


@pytest.mark.parametrize(
    "body",
    [b"", b"{", b"\xff\xfe", b"NaN", b'{"a": NaN}', b'{"a": Infinity}', b"[" * 100_000],
)
def test_non_json_bodies_are_400(body: bytes) -> None:
    """Empty, truncated, non-UTF-8, NaN and absurdly nested bodies are not JSON."""
    with pytest.raises(BodyNotJSONError):
        parse_event(body)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"[]", None),
        (b'"x"', None),
        (b'{"data": {}}', "event"),
        (b'{"event": 5, "data": {}}', "event"),
        (b'{"event": "transfer.success"}', "data"),
        (b'{"event": "transfer.success", "data": []}', "data"),
        (_success(reference=None), "data.reference"),
        (_success(reference=""), "data.reference"),
        (_success(reference="a\x00b"), "data.reference"),
        (_success(reference="r" * 101), "data.reference"),
        (_success(amount=1.5), "data.amount"),
        (_success(amount="100"), "data.amount"),
        (_success(amount=True), "data.amount"),
        (_success(amount=-1), "data.amount"),
        (_success(amount=2**63), "data.amount"),
        (_success(amount=None), "data.amount"),
        (_success(fee=-5), "data.fee"),
        (_success(status="done"), "data.status"),
        (_success(status="failed"), "data.status"),
        (_success(status=None), "data.status"),
        (_success(merchant_reference=7), "data.merchant_reference"),
    ],
)
def test_invalid_events_are_422_naming_the_field(body: bytes, field: str | None) -> None:
    """JSON that is not a valid event raises InvalidEventError naming the field."""
    with pytest.raises(InvalidEventError) as caught:
        parse_event(body)
    assert caught.value.field == field


def test_the_largest_kobo_amount_is_accepted() -> None:
    """2^63-1 kobo is the largest amount a transfer may carry."""
    event = parse_event(_success(amount=2**63 - 1, fee=0))
    assert isinstance(event, TransferEvent) and event.amount == 2**63 - 1


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512))
def test_random_bytes_never_raise_anything_but_validation_errors(body: bytes) -> None:
    """Arbitrary bytes parse or raise only BodyNotJSONError / InvalidEventError."""
    with contextlib.suppress(BodyNotJSONError, InvalidEventError):
        parse_event(body)


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {"event": st.sampled_from(["transfer.success", "transfer.failed"]) | st.text(max_size=70)},
        optional={
            "data": st.dictionaries(
                st.sampled_from(
                    ["reference", "merchant_reference", "amount", "fee", "status", "failure_reason"]
                )
                | st.text(max_size=5),
                json_values,
                max_size=7,
            )
        },
    )
)
def test_hostile_event_shapes_never_raise_anything_but_validation_errors(
    body: dict[str, Any],
) -> None:
    """Near-valid events with hostile field values parse or raise only InvalidEventError."""
    raw = json.dumps(body).encode()
    try:
        parsed = parse_event(raw)
    except InvalidEventError:
        return
    assert parsed.canonical == canonical_json(body)


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(exclude_categories=()), min_size=1, max_size=20).filter(str.strip))
def test_text_fields_are_refused_exactly_when_they_hold_control_or_surrogate_characters(
    reference: str,
) -> None:
    """The printable-ASCII shortcut refuses the same references as the full character check."""
    body = json.dumps(
        {"event": "transfer.failed", "data": {"reference": reference, "status": "failed"}}
    ).encode()
    unsafe = any(ord(c) < 0x20 or 0xD800 <= ord(c) <= 0xDFFF for c in reference)
    try:
        parse_event(body)
    except InvalidEventError as exc:
        assert unsafe and exc.field == "data.reference"
    else:
        assert not unsafe


def test_the_decoder_is_reused_and_still_refuses_constants() -> None:
    """NaN is refused on every call, not only the first (one decoder serves every body)."""
    for _ in range(3):
        with pytest.raises(BodyNotJSONError):
            parse_event(b'{"event": "x", "data": {"a": -Infinity}}')
