"""A subject's one key format and a new checkable row's columns (ledger/subjects.py)."""

from __future__ import annotations

import datetime as dt

import pytest

from ledger.events.types import Subject
from ledger.subjects import SubjectRef, checkable_row, subject_key

NOW = dt.datetime(2026, 12, 3, 9, 0, tzinfo=dt.UTC)


def test_a_subject_key_is_kind_colon_reference() -> None:
    """`transfer:T-1`, whether given the enum, its stored name or a SubjectRef; a reference
    holding a colon stays whole after the first one."""
    assert subject_key(Subject.TRANSFER, "T-1") == "transfer:T-1"
    assert subject_key("collection", "C:9") == "collection:C:9"
    assert SubjectRef(Subject.COLLECTION, 7, "C-7").key == "collection:C-7"


def test_an_unknown_subject_name_is_refused() -> None:
    """A key is never rendered for a subject payrecon does not keep."""
    with pytest.raises(ValueError):
        subject_key("payout", "T-1")


def test_a_new_checkable_row_starts_pending_unconfirmed_and_unchecked() -> None:
    """The defaults every book's new row starts with, under the row's own values."""
    due = NOW + dt.timedelta(seconds=60)
    row = checkable_row(now=NOW, next_check_at=due, reference="T-1", status="failed")
    assert row == {
        "status": "failed",
        "confirmed": False,
        "check_attempts": 0,
        "not_found_count": 0,
        "event_sequence": 0,
        "next_check_at": due,
        "created_at": NOW,
        "updated_at": NOW,
        "reference": "T-1",
    }
