"""The pure parts of the operators' reads: ids from paths, subjects, event cursors."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.events.types import Subject
from ledger.queries import MAX_ROW_ID, encode_cursor
from relay.endpoints import check_url
from relay.errors import EndpointInputError
from relay.queries import EVENT_CURSOR, parse_event_cursor, parse_row_id, parse_subject


def test_row_ids_are_positive_ascii_numbers_a_column_can_hold() -> None:
    """`7` and 2^63-1 are ids; 0, signs, other digits, 2^63 and text are not (None)."""
    assert parse_row_id("7") == 7 and parse_row_id(str(MAX_ROW_ID)) == MAX_ROW_ID
    for text in ("0", "-1", "+1", "١", "²", str(MAX_ROW_ID + 1), "9" * 400, "", "1e3", " 1"):
        assert parse_row_id(text) is None, text


def test_subjects_are_a_kind_or_one_subject_by_reference() -> None:
    """`transfer` is every transfer; `transfer:T-1:x` is the one whose reference is `T-1:x`."""
    assert parse_subject("transfer") == (Subject.TRANSFER, None)
    assert parse_subject("collection:C-9") == (Subject.COLLECTION, "C-9")
    assert parse_subject("transfer:T-1:x") == (Subject.TRANSFER, "T-1:x")
    for bad in ("payout", "transfer:", "", ":T-1"):
        with pytest.raises(ValueError):
            parse_subject(bad)


def test_event_cursors_are_not_transfer_cursors() -> None:
    """An event cursor gives back its id; a transfers' cursor or garbage is a ValueError."""
    assert parse_event_cursor(encode_cursor(41, kind=EVENT_CURSOR)) == 41
    for bad in (encode_cursor(41), "!!", "ZTo", encode_cursor(MAX_ROW_ID + 1, kind="e")):
        with pytest.raises(ValueError):
            parse_event_cursor(bad)


@given(st.text(max_size=80))
@settings(max_examples=400, deadline=None)
def test_check_url_refuses_with_its_own_error_only(url: str) -> None:
    """Any text is either accepted as given (stripped) or an EndpointInputError; nothing else
    escapes."""
    try:
        accepted = check_url(url, allow=())
    except EndpointInputError:
        return
    assert accepted == url.strip() and accepted.startswith(("http://", "https://"))


@given(st.sampled_from(["http://", "https://"]), st.text(max_size=40))
@settings(max_examples=400, deadline=None)
def test_check_url_after_a_scheme_refuses_with_its_own_error_only(scheme: str, rest: str) -> None:
    """Text after a valid scheme (hosts, ports, brackets) never raises anything else, and
    what is accepted has a host."""
    try:
        accepted = check_url(scheme + rest, allow=())
    except EndpointInputError:
        return
    assert urlsplit(accepted).hostname
